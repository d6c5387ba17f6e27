// Places end to end with the real binary: `cairn places import` into a stopped hub's data directory (bad rows named
// by line, the rest imported), a hub started on it answering places.nearest over a WebSocket, then a second import
// while the hub runs, which the command hands to the hub with SIGHUP so that places.search finds the new place. The
// data directory may come from the configuration file alone, as it does for `serve`.
import CairnTestSupport
import Foundation
import Glibc
import Testing

extension ServerIntegration {
    @Suite struct PlacesCommandTests {
        func names(_ reply: [String: Any]) -> [String] {
            (reply["places"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
        }

        /// A file of which no row could be read (here: a header without `lat`) fails the command, imports nothing.
        @Test func aWrongHeaderFailsTheImport() throws {
            let data = NSTemporaryDirectory() + "cairn-places-\(UUID().uuidString)"
            let csv = data + ".csv"
            defer { for path in [data, csv] { try? FileManager.default.removeItem(atPath: path) } }
            try "latitude_deg,lon,name\n46.02,7.75,Zermatt\n".write(toFile: csv, atomically: true, encoding: .utf8)
            let run = try TestServerProcess(arguments: ["places", "import", csv, "--data", data])
            #expect(try run.waitForExit(timeout: 60) == 1, "output: \(run.output)")
            #expect(run.output.contains("the header must name the columns lat, lon and name"), "\(run.output)")
            #expect(run.output.contains("nothing imported"), "\(run.output)")
            let list = try TestServerProcess(arguments: ["places", "list", "--data", data])
            #expect(try list.waitForExit(timeout: 60) == 0)
            #expect(!list.output.contains("Zermatt") && !list.output.contains("\tplace\t1"), "\(list.output)")
        }

        @Test func importedPlacesAreServedAndAReimportReachesARunningHub() throws {
            let data = NSTemporaryDirectory() + "cairn-places-\(UUID().uuidString)"
            let csv = data + ".csv"
            let geojson = data + ".geojson"
            defer {
                for path in [data, csv, geojson] { try? FileManager.default.removeItem(atPath: path) }
            }
            let rows = """
                lat,lon,name,id,elevation
                46.02,7.75,Zermatt,z,1620
                46.10,7.23,Verbier,v,1500
                north,7.0,Nowhere,n,1
                -33.86,151.21,"Thredbo, NSW",t,1365
                """
            try rows.write(toFile: csv, atomically: true, encoding: .utf8)
            let first = try TestServerProcess(arguments: [
                "places", "import", csv, "--category", "ski_area", "--source", "ski", "--data", data,
            ])
            #expect(try first.waitForExit(timeout: 60) == 0, "output: \(first.output)")
            #expect(first.output.contains("line 4: lat 'north' is not a number"), "\(first.output)")
            #expect(first.output.contains("3 new"), "\(first.output)")

            let (server, port) = try startServeProcess(data: data)
            let (client, _) = try registerMember(port: port, "skier")
            let near = try client.requestOK("places.nearest", ["lat": 46.0, "lon": 7.7, "limit": 2])
            #expect(names(near) == ["Zermatt", "Verbier"])
            let places = try #require(near["places"] as? [[String: Any]])
            #expect(places.first?["category"] as? String == "ski_area")
            let distance = try #require(places.first?["distance"] as? Double)
            #expect(abs(distance - 4456) < 5)
            let place = try #require(places.first?["place"] as? Int)
            let got = try client.requestOK("place.get", ["place": place])
            let attributes = (got["place"] as? [String: Any])?["attributes"] as? [String: Any]
            #expect(attributes?["elevation"] as? Double == 1620)

            // While the hub runs: the import writes beside it and signals it to reload.
            let feature = """
                {"type":"FeatureCollection","features":[
                {"type":"Feature","id":"s","geometry":{"type":"Point","coordinates":[7.93,46.11]},
                 "properties":{"name":"Saas-Fée","category":"ski_area"}},
                {"type":"Feature","geometry":{"type":"LineString","coordinates":[[0,0],[1,1]]},"properties":{}}
                ]}
                """
            try feature.write(toFile: geojson, atomically: true, encoding: .utf8)
            let second = try TestServerProcess(arguments: [
                "places", "import", geojson, "--source", "ski", "--data", data,
            ])
            #expect(try second.waitForExit(timeout: 60) == 0, "output: \(second.output)")
            #expect(second.output.contains("line 4: the geometry is a LineString"), "\(second.output)")
            var found: [String] = []
            for _ in 0..<100 {
                found = names(try client.requestOK("places.search", ["q": "saas-fee"]))
                if !found.isEmpty { break }
                usleep(100_000)
            }
            #expect(found == ["Saas-Fée"])

            // /metrics: places by category, the queries answered and timed, the reload the import caused.
            let response = try HTTPClient.get(port: port, path: "/metrics")
            #expect(response.status == 200)
            let metrics = try PrometheusText(response.text)
            #expect(metrics.value("cairn_places", ["category": "ski_area"]) == 4)
            #expect(try #require(metrics.value("cairn_places_nearest_total")) >= 1)
            #expect(try #require(metrics.value("cairn_places_nearest_seconds_count")) >= 1)
            #expect(try #require(metrics.value("cairn_places_searches_total")) >= 1)
            #expect(try #require(metrics.value("cairn_places_reloads_total")) >= 1)
            #expect(metrics.value("cairn_places_loaded") == 4)

            server.signal(SIGTERM)
            #expect(try server.waitForExit(timeout: 15) == 0)
        }

        /// A hub whose data directory is named only in its configuration file: `--config FILE` (or `CAIRN_CONFIG`)
        /// is all `places` needs to work there, as for `serve` and `backup`.
        @Test func theDataDirectoryComesFromTheConfigurationFile() throws {
            let work = NSTemporaryDirectory() + "cairn-places-config-\(UUID().uuidString)"
            try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: work) }
            let data = work + "/hub-data"
            let config = work + "/cairn.toml"
            try "[storage]\ndirectory = \"\(data)\"\n".write(toFile: config, atomically: true, encoding: .utf8)
            let csv = work + "/ski.csv"
            try "lat,lon,name,id\n46.02,7.75,Zermatt,z\n46.10,7.23,Verbier,v\n".write(
                toFile: csv, atomically: true, encoding: .utf8)

            let imported = try TestServerProcess(arguments: [
                "places", "import", csv, "--source", "ski", "--config", config,
            ])
            #expect(try imported.waitForExit(timeout: 60) == 0, "\(imported.output)")
            #expect(imported.output.contains("2 new"), "\(imported.output)")
            #expect(
                FileManager.default.fileExists(atPath: data + "/cairn.sqlite"), "imported into the file's directory")
            let listed = try TestServerProcess(arguments: ["places", "list"], environment: ["CAIRN_CONFIG": config])
            #expect(try listed.waitForExit(timeout: 60) == 0, "\(listed.output)")
            #expect(listed.output.contains("ski\tplace\t2"), "\(listed.output)")
            let direct = try TestServerProcess(arguments: ["places", "list", "--data", data])
            #expect(try direct.waitForExit(timeout: 60) == 0, "\(direct.output)")
            #expect(direct.output.contains("ski\tplace\t2"), "\(direct.output)")
        }
    }
}
