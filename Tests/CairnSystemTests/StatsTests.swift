// The stats channel and /metrics over real sockets: an ordinary user is refused; an operator (granted with the
// real `cairn user grant-ops` beside the running hub, no restart) sees connections rise as clients connect and
// message counters rise as they send; `/metrics` parses strictly as the Prometheus text format and its counters
// and fan-out histogram grow with traffic; the metrics token is enforced; and `cairn stats --once` prints a
// reading for an operator and fails for anyone else.
import CairnApp
import CairnCore
import CairnServer
import CairnTestSupport
import Foundation
import Testing

extension ServerIntegration {
    @Suite struct StatsTests {
        /// Waits for `stats` events on `client` until `condition` holds for one (or the deadline passes).
        func stats(_ client: WebSocketClient, until condition: ([String: Any]) -> Bool) throws -> [String: Any] {
            let deadline = Date().addingTimeInterval(15)
            var last: [String: Any] = [:]
            while Date() < deadline {
                last = try client.nextEvent("stats", timeout: 5)
                if condition(last) { return last }
            }
            Issue.record("no stats event satisfied the condition; last: \(last)")
            return last
        }

        func group(_ event: [String: Any], _ name: String) -> [String: Any] { event[name] as? [String: Any] ?? [:] }

        func grantOps(_ username: String, in hub: RunningHub) throws {
            let grant = try TestServerProcess(arguments: ["user", "grant-ops", username, "--data", hub.dataDirectory])
            #expect(try grant.waitForExit(timeout: 60) == 0, "output: \(grant.output)")
            #expect(grant.output.contains("granted ops"))
        }

        @Test func anOrdinaryUserIsRefused() throws {
            let hub = try RunningHub()
            defer { hub.removeData() }
            let (alice, _) = try hub.member("alice")
            let reply = try alice.request("stats.watch")
            #expect(reply["ok"] as? Bool == false)
            #expect(errorCode(reply) == "forbidden")
            #expect(try alice.pollObject(within: 1.5) == nil)
        }

        @Test func grantingOpsToAnUnknownUserFailsAndChangesNothing() throws {
            let hub = try RunningHub()
            defer { hub.removeData() }
            let grant = try TestServerProcess(arguments: ["user", "grant-ops", "nobody", "--data", hub.dataDirectory])
            #expect(try grant.waitForExit(timeout: 60) == 1)
            #expect(grant.output.contains("no user named 'nobody'"), "output: \(grant.output)")
            #expect(try hub.app.store.usernames(withRole: .ops).isEmpty)
        }

        @Test func anOperatorSeesConnectionsAndMessagesMove() throws {
            let hub = try RunningHub()
            defer { hub.removeData() }
            let (ops, _) = try hub.member("ops")
            // Refused first; granted from the command line while the hub runs; accepted at the next watch.
            #expect(errorCode(try ops.request("stats.watch")) == "forbidden")
            try grantOps("ops", in: hub)
            let watch = try ops.requestOK("stats.watch")
            #expect(watch["interval_ms"] as? Int == 1000)
            let first = try ops.nextEvent("stats", timeout: 5)
            let connectionsBefore = try #require(group(first, "connections")["total"] as? Int)
            let messagesBefore = try #require(group(first, "traffic")["messages_in_total"] as? Int)

            let alice = try hub.member("alice")
            let bob = try hub.member("bob")
            try hub.befriend(alice, bob)
            _ = try bob.0.requestOK("friends.watch")
            for i in 0..<20 { _ = try alice.0.requestOK("pos", ["lat": 45 + Double(i) * 0.001, "lon": 7]) }
            _ = try bob.0.nextEvent("pos")

            let later = try stats(ops) { e in
                (group(e, "connections")["total"] as? Int ?? 0) >= connectionsBefore + 2
                    && (group(e, "traffic")["messages_in_total"] as? Int ?? 0) >= messagesBefore + 20
                    && (group(e, "live")["positions_accepted_total"] as? Int ?? 0) >= 20
            }
            #expect(group(later, "connections")["watching"] as? Int == 1)
            #expect((group(later, "process")["resident_bytes"] as? Int ?? 0) > 1_000_000)
            #expect((group(later, "fanout")["deliveries_total"] as? Int ?? 0) >= 1)
            #expect(group(later, "live")["positions"] as? Int == 1)
            #expect(group(later, "live")["relics"] as? Int == 0)

            // A relic left is counted live.
            _ = try alice.0.requestOK("relic.create", ["text": "counted", "radius": 20])
            let withRelic = try stats(ops, until: { e in group(e, "live")["relics"] as? Int == 1 })
            #expect(group(withRelic, "live")["relics"] as? Int == 1)

            // Unwatching stops the events.
            _ = try ops.requestOK("stats.unwatch")
            _ = try? ops.pollObject(within: 0.3)  // an event already on its way
            #expect(try ops.pollObject(within: 1.5) == nil)
        }

        @Test func metricsParseAndCountersIncrease() throws {
            let hub = try RunningHub()
            defer { hub.removeData() }
            let before = try metrics(hub)
            #expect(before.types["cairn_fanout_latency_seconds"] == "histogram")
            #expect(before.types["cairn_messages_received_total"] == "counter")
            let received = try #require(before.value("cairn_messages_received_total"))
            let fanout = try #require(before.value("cairn_fanout_latency_seconds_count"))

            let alice = try hub.member("alice")
            let bob = try hub.member("bob")
            try hub.befriend(alice, bob)
            _ = try bob.0.requestOK("friends.watch")
            _ = try alice.0.requestOK("pos", ["lat": 1, "lon": 2])
            _ = try bob.0.nextEvent("pos")

            let after = try metrics(hub)
            #expect(try #require(after.value("cairn_messages_received_total")) >= received + 6)
            #expect(try #require(after.value("cairn_messages_sent_total")) > 0)
            #expect(try #require(after.value("cairn_bytes_received_total")) > 0)
            #expect(try #require(after.value("cairn_fanout_latency_seconds_count")) >= fanout + 1)
            #expect(after.value("cairn_connections", ["state": "open"]) == 2)
            #expect(after.value("cairn_connections", ["state": "watching"]) == 1)
            #expect(after.value("cairn_positions_live") == 1)
            #expect(try #require(after.value("cairn_resident_memory_bytes")) > 1_000_000)
            #expect(try #require(after.value("cairn_uptime_seconds")) >= 0)
        }

        func metrics(_ hub: RunningHub, headers: [String: String] = [:]) throws -> PrometheusText {
            let response = try HTTPClient.get(port: hub.port, path: "/metrics", headers: headers)
            #expect(response.status == 200)
            #expect(response.headers["content-type"]?.hasPrefix("text/plain") == true, "\(response.headers)")
            return try PrometheusText(response.text)
        }

        @Test func theMetricsTokenIsEnforced() throws {
            let hub = try RunningHub { $0.server.metricsToken = "s3cret-token" }
            defer { hub.removeData() }
            #expect(try HTTPClient.get(port: hub.port, path: "/metrics").status == 401)
            let wrong = try HTTPClient.get(port: hub.port, path: "/metrics", headers: ["Authorization": "Bearer nope"])
            #expect(wrong.status == 401)
            let parsed = try metrics(hub, headers: ["Authorization": "Bearer s3cret-token"])
            #expect(parsed.value("cairn_connections", ["state": "open"]) == 0)
            // /healthz stays open.
            #expect(try HTTPClient.get(port: hub.port, path: "/healthz").status == 200)
        }

        @Test func statsOnceCommandPrintsAReadingForAnOperatorOnly() throws {
            let hub = try RunningHub()
            defer { hub.removeData() }
            let (_, opsToken) = try hub.registered("ops")
            let (_, userToken) = try hub.registered("plain")
            try grantOps("ops", in: hub)
            let url = "ws://127.0.0.1:\(hub.port)/ws"

            let json = try TestServerProcess(arguments: [
                "stats", "--url", url, "--token", opsToken, "--once", "--json",
            ])
            #expect(try json.waitForExit(timeout: 30) == 0, "output: \(json.output)")
            let line = try #require(json.output.split(separator: "\n").first { $0.hasPrefix("{") })
            let event = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            #expect(event["ev"] as? String == "stats")
            #expect((group(event, "connections")["total"] as? Int ?? 0) >= 1)

            let table = try TestServerProcess(arguments: [
                "stats", "--url", url, "--username", "ops",
                "--password", "password1", "--once",
            ])
            #expect(try table.waitForExit(timeout: 30) == 0, "output: \(table.output)")
            #expect(table.output.contains("connections"))
            #expect(table.output.contains("fan-out"))

            let refused = try TestServerProcess(arguments: ["stats", "--url", url, "--token", userToken, "--once"])
            #expect(try refused.waitForExit(timeout: 30) == 1)
            #expect(refused.output.contains("forbidden"), "output: \(refused.output)")
        }

        @Test func statsCommandExitsCleanlyOnInterrupt() throws {
            let hub = try RunningHub()
            defer { hub.removeData() }
            let (_, token) = try hub.registered("ops")
            try grantOps("ops", in: hub)
            let live = try TestServerProcess(arguments: [
                "stats", "--url", "ws://127.0.0.1:\(hub.port)/ws",
                "--token", token, "--json",
            ])
            _ = try live.waitForLine(containing: "\"ev\":\"stats\"", timeout: 30)
            live.signal(SIGINT)
            #expect(try live.waitForExit(timeout: 15) == 0, "output: \(live.output)")
        }
    }
}
