// The plain-text answer every HTTP service of the protocol layer gives for a refusal or a short message: UTF-8,
// never sniffed as anything else by a browser.
import CairnLoop

extension HTTPReply {
    /// A plain-text answer with `body`, and `headers` beside the no-sniff header.
    static func plainText(_ status: Int, _ body: String, headers: [(name: String, value: String)] = []) -> HTTPReply {
        HTTPReply(
            status: status, contentType: "text/plain; charset=utf-8",
            headers: headers + [("X-Content-Type-Options", "nosniff")], body: .bytes(Array(body.utf8)))
    }
}
