import Testing

// Who may read /metrics: the token when one is set; without one, anyone while the hub listens on loopback, and
// only local peers once it listens beyond the machine (a container's 0.0.0.0).
@testable import CairnServer

@Suite(.timeLimit(.minutes(5)))
struct MetricsAccessTests {
    @Test func aConfiguredTokenMustBePresentedExactly() {
        #expect(
            MetricsAccess.decide(token: "s3cret", presented: "s3cret", host: "0.0.0.0", peer: "10.0.0.9")
                == .granted)
        #expect(
            MetricsAccess.decide(token: "s3cret", presented: nil, host: "127.0.0.1", peer: "127.0.0.1")
                == .tokenRequired)
        #expect(
            MetricsAccess.decide(token: "s3cret", presented: "s3cre", host: "127.0.0.1", peer: "127.0.0.1")
                == .tokenRequired)
    }

    @Test func withoutATokenAHubListeningBeyondLoopbackServesLocalPeersOnly() {
        #expect(MetricsAccess.decide(token: nil, presented: nil, host: "127.0.0.1", peer: "127.0.0.1") == .granted)
        #expect(MetricsAccess.decide(token: nil, presented: nil, host: "0.0.0.0", peer: "127.0.0.1") == .granted)
        #expect(
            MetricsAccess.decide(token: nil, presented: nil, host: "0.0.0.0", peer: "::ffff:127.0.0.1")
                == .granted)
        #expect(MetricsAccess.decide(token: nil, presented: nil, host: "0.0.0.0", peer: "172.17.0.1") == .localOnly)
        #expect(MetricsAccess.decide(token: nil, presented: nil, host: "::", peer: "2001:db8::1") == .localOnly)
        #expect(MetricsAccess.decide(token: nil, presented: nil, host: "0.0.0.0", peer: nil) == .localOnly)
    }

    @Test(arguments: ["127.0.0.1", "127.9.8.7", "::1", "localhost", "::ffff:127.0.0.1"])
    func loopbackAddresses(_ address: String) { #expect(MetricsAccess.isLoopback(address)) }

    @Test(arguments: ["0.0.0.0", "10.0.0.1", "::", "::ffff:10.0.0.1", "128.0.0.1", "127.0.0", "fe80::1"])
    func otherAddresses(_ address: String) { #expect(!MetricsAccess.isLoopback(address)) }
}

/// A reading that walks every connection is taken at most once per interval, however often it is asked for.
@Suite(.timeLimit(.minutes(5)))
struct PeriodicReadingTests {
    @Test func aReadingIsReusedWithinItsInterval() {
        var source = 0
        var reading = PeriodicReading(intervalNs: 1_000) { () -> Int in
            source += 1
            return source
        }
        #expect(reading.value(now: 10_000) == 1)
        for t in stride(from: 10_001, to: 11_000, by: 7) { #expect(reading.value(now: UInt64(t)) == 1) }
        #expect(reading.readings == 1)
        #expect(reading.value(now: 11_000) == 2)
        #expect(reading.readings == 2)
    }
}
