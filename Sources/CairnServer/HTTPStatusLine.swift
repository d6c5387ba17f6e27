// Why this exists: libwebsockets writes a status line's reason phrase only for the codes in its own table (200, 304,
// 400–417, 5xx) and leaves it empty for the others Cairn answers, such as `HTTP/1.1 201 ` for an upload. An empty
// phrase is legal, but `curl -i` readers and some clients expect one, so after libwebsockets writes the head, the
// phrase it left out is put in. HTTP/2 heads have no status line and are left alone.

import Glibc

/// The reason phrases libwebsockets does not write.
enum HTTPStatusLine {
    static let phrases: [UInt32: String] = [
        201: "Created", 202: "Accepted", 204: "No Content", 422: "Unprocessable Content", 429: "Too Many Requests",
        431: "Request Header Fields Too Large",
    ]

    /// Puts `status`'s phrase into the status line libwebsockets wrote from `start` up to `p` (which moves on), when
    /// that line ends without one. False when the phrase does not fit before `end`.
    static func addMissingPhrase(
        status: UInt32, start: UnsafeMutablePointer<UInt8>, p: inout UnsafeMutablePointer<UInt8>?,
        end: UnsafeMutablePointer<UInt8>
    ) -> Bool {
        guard let phrase = phrases[status], let written = p, written - start > 6 else { return true }
        guard start[0] == UInt8(ascii: "H"), start[4] == UInt8(ascii: "/") else { return true }  // "HTTP/"
        var lineEnd = start
        while lineEnd + 1 < written && !(lineEnd[0] == 13 && lineEnd[1] == 10) { lineEnd += 1 }
        guard lineEnd + 1 < written, lineEnd[-1] == UInt8(ascii: " ") else { return true }
        let bytes = Array(phrase.utf8)
        guard written + bytes.count <= end else { return false }
        memmove(lineEnd + bytes.count, lineEnd, written - lineEnd)
        lineEnd.update(from: bytes, count: bytes.count)
        p = written + bytes.count
        return true
    }
}
