// Admins' live settings and daily figures over real sockets and HTTP: lowering `max_upload_bytes` with
// `admin.settings.set` refuses a bigger upload at once (413, from its declared length) with no restart, the change
// is in the audit log, and after a restart the stored value is still in force; `GET /v1/admin/stats.csv` answers 401
// without a token or with a bad one, 403 to a member who is not an admin, 400 for a bad `days`, and to an admin a
// `text/csv` table with a header row and one line per day whose last line counts today's new and active users —
// the same figures `admin.stats` gives.
import CairnTestSupport
import Foundation
import Testing

extension ServerIntegration {
    @Suite struct AdminSettingsStatsTests {
        @Test func theUploadLimitChangesLiveIsAuditedAndSurvivesARestart() throws {
            let hub = try RunningHub()
            defer { hub.removeData() }
            let (root, _) = try hub.member("root")
            try AdminTests().grantAdmin("root", in: hub)
            let (_, token) = try hub.registered("alice")
            let media = MediaTests()
            #expect(
                try media.upload(hub, token: token, body: MediaTests.jpeg(size: 4096), type: "image/jpeg").status == 201
            )

            let set = try root.requestOK("admin.settings.set", ["settings": ["max_upload_bytes": 2048]])
            #expect((set["settings"] as? [String: Any])?["max_upload_bytes"] as? Int == 2048)
            let over = try media.upload(
                hub, token: token, body: MediaTests.jpeg(size: 4096, seed: 2), type: "image/jpeg")
            #expect(over.status == 413)
            #expect(over.text.contains("2048"))
            #expect(
                try media.upload(hub, token: token, body: MediaTests.jpeg(size: 2048), type: "image/jpeg").status == 201
            )
            let bad = try root.request("admin.settings.set", ["settings": ["max_upload_bytes": 10]])
            #expect(errorCode(bad) == "bad_request")
            #expect(errorMessage(bad).contains("max_upload_bytes"))
            let audit = try root.requestOK("admin.audit")
            let line = try #require((audit["entries"] as? [[String: Any]])?.first)
            #expect(line["action"] as? String == "setting.set")
            #expect(line["detail"] as? String == "\(20 << 20) → 2048")

            root.close()
            try hub.stop()
            let again = try RunningHub(dataDirectory: hub.dataDirectory)
            defer { try? again.stop() }
            let admin = try again.client()
            _ = try admin.requestOK("login", ["username": "root", "password": "password1"])
            let read = try admin.requestOK("admin.settings.get")
            #expect((read["settings"] as? [String: Any])?["max_upload_bytes"] as? Int == 2048)
            let after = try media.upload(
                again, token: token, body: MediaTests.jpeg(size: 4096, seed: 3), type: "image/jpeg")
            #expect(after.status == 413)
        }

        @Test func theStatsCSVIsForAdminsBearingTheirToken() throws {
            let hub = try RunningHub()
            defer { hub.removeData() }
            let (root, rootToken) = try hub.registered("root")
            try AdminTests().grantAdmin("root", in: hub)
            let (_, aliceToken) = try hub.registered("alice")
            func csv(_ query: String = "", token: String?) throws -> HTTPResponse {
                try HTTPClient.get(
                    port: hub.port, path: "/v1/admin/stats.csv" + query,
                    headers: token.map { ["Authorization": "Bearer \($0)"] } ?? [:])
            }
            let anonymous = try csv(token: nil)
            #expect(anonymous.status == 401)
            #expect(anonymous.headers["www-authenticate"] == "Bearer")
            #expect(try csv(token: String(repeating: "x", count: 43)).status == 401)
            #expect(try csv(token: aliceToken).status == 403)
            #expect(try csv("?days=0", token: nil).status == 401)  // who asks is checked first
            #expect(try csv("?days=0", token: rootToken).status == 400)
            #expect(try csv("?days=367", token: rootToken).status == 400)

            // The day's activity is written on the tick (about once a second): asked until it is there.
            var answer = try csv("?days=7", token: rootToken)
            let deadline = Date().addingTimeInterval(10)
            while !answer.text.hasSuffix(",2,2,0,0,0,0,\r\n") && Date() < deadline {
                Thread.sleep(forTimeInterval: 0.2)
                answer = try csv("?days=7", token: rootToken)
            }
            #expect(answer.status == 200)
            #expect(answer.headers["content-type"]?.hasPrefix("text/csv") == true)
            let lines = answer.text.split(separator: "\r\n").map(String.init)
            #expect(lines.count == 8)
            #expect(
                lines.first
                    == "date,new_users,active_users,pictures_posted,likes,"
                    + "reports_opened,reports_resolved,median_resolve_s"
            )
            let today = try #require(lines.last)
            let iso = ISO8601DateFormatter()
            #expect(today.hasPrefix(String(iso.string(from: Date()).prefix(10))))
            #expect(
                today.split(separator: ",", omittingEmptySubsequences: false).dropFirst().map(String.init) == [
                    "2", "2", "0", "0", "0", "0", "",
                ])
            #expect(try csv(token: rootToken).text.split(separator: "\r\n").count == 31)

            let rows = try #require(try root.requestOK("admin.stats", ["days": 7])["rows"] as? [[String: Any]])
            #expect(rows.count == 7)
            #expect(rows.last?["new_users"] as? Int == 2 && rows.last?["active_users"] as? Int == 2)
        }
    }
}
