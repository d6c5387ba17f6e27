// Load goes to loopback only, and /proc readings are parsed field by field.
import CairnLoadTest
import Glibc
import Testing

@Suite(.timeLimit(.minutes(5)))
struct LoadConfigurationTests {
    @Test func onlyLoopbackAddressesAreAccepted() throws {
        var c = LoadConfiguration(server: .cairn, port: 7681)
        for host in ["127.0.0.1", "127.5.6.7"] {
            c.host = host
            try c.validate()
        }
        for host in ["10.0.0.1", "localhost", "0.0.0.0", "127.0.0", "::1", "128.0.0.1", "127.0.0.256"] {
            c.host = host
            #expect(throws: LoadConfigurationError.notLoopback(host)) { try c.validate() }
        }
    }

    @Test func manyUsersAreSpreadOverSourceAddresses() {
        let c = LoadConfiguration(server: .cairn, port: 1)
        #expect(c.sourceAddress(user: 5, users: 20_000) == nil)
        #expect(c.sourceAddressCount(users: 50_000) == 3)
        #expect(c.sourceAddress(user: 4, users: 50_000) == "127.0.0.3")
    }

    @Test func procStatAndStatusAreParsed() throws {
        let line = "1234 (a (weird) name) S 1 2 3 4 5 6 7 8 9 10 250 50 0 0 20 0 1 0 100 1000 10"
        #expect(ServerProcessStats.cpuSeconds(statLine: line, ticksPerSecond: 100) == 3.0)
        let status = "Name:\tcairn\nVmHWM:\t   20480 kB\nVmRSS:\t   10240 kB\n"
        #expect(ServerProcessStats.kibField("VmHWM", in: status) == 20480)
        #expect(ServerProcessStats.kibField("VmRSS", in: status) == 10240)
        let me = try #require(ServerProcessStats.sample(pid: getpid()))
        #expect(me.rssKiB > 0 && me.peakRssKiB >= me.rssKiB)
        #expect(ServerProcessStats.sample(pid: Int32.max) == nil)
    }
}
