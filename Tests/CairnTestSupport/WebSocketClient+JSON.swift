// Why this exists: Cairn's wire protocol is newline-separated JSON objects inside text frames, in both directions,
// with replies matched to requests by `id` and push events (`ev`) interleaved freely. Tests want to say
// "send this request, give me its reply" and "give me the next pos event" without caring how the server batched its
// frames or in what order replies and events arrived. Objects that arrive while waiting for something else are
// queued, never dropped, so a later `nextObject` or `nextEvent` still sees them in arrival order.

import Foundation

extension WebSocketClient {
    // MARK: - Sending JSON

    /// Sends `object` as one text frame of compact JSON.
    public func send(_ object: [String: Any]) throws {
        try sendText(Self.jsonLine(object))
    }

    /// Sends several objects in ONE text frame, separated by "\n" (a batch, as the protocol allows).
    public func sendLines(_ objects: [[String: Any]]) throws {
        try sendText(objects.map(Self.jsonLine).joined(separator: "\n"))
    }

    // MARK: - Receiving JSON

    /// The next JSON object, from the queue or the socket (a frame holding several lines yields several objects).
    /// Throws `TestClientError.closed` carrying the code and reason if the connection closes instead,
    /// `.timeout` if nothing arrives in time, `.malformedJSON` for a line that is not a JSON object and
    /// `.unexpectedMessage` for a binary frame.
    public func nextObject(timeout: Double? = nil) throws -> [String: Any] {
        try takeFirst(timeout: timeout, waitingFor: "any JSON object") { _ in true }
    }

    /// Like `nextObject`, but returns nil instead of throwing when nothing arrives within `seconds` — for
    /// asserting that the server stays silent (e.g. a hidden friend's position is not pushed).
    public func pollObject(within seconds: Double) throws -> [String: Any]? {
        do {
            return try takeFirst(timeout: seconds, waitingFor: "any JSON object") { _ in true }
        } catch let error as TestClientError where error.isTimeout {
            return nil
        }
    }

    /// Sends `{"id": n, "op": op, ...fields}` with the next client-local id (1, 2, 3, ...) and returns the reply
    /// carrying that id. Events and other replies arriving meanwhile stay queued for `nextObject`/`nextEvent`.
    /// `fields` may not contain "id" or "op" (they would clash with the envelope; use `send` + `nextReply`).
    public func request(_ op: String, _ fields: [String: Any] = [:], timeout: Double? = nil) throws -> [String: Any] {
        if let clash = fields.keys.first(where: { $0 == "id" || $0 == "op" }) {
            throw TestClientError.invalidArgument(
                "request(\"\(op)\") fields contain \"\(clash)\", which is the envelope's; build the object yourself "
                    + "with send(_:) and wait with nextReply(id:)")
        }
        let id = nextRequestID
        nextRequestID += 1
        var object = fields
        object["id"] = id
        object["op"] = op
        try send(object)
        return try takeFirst(timeout: timeout, waitingFor: "the reply to \(op) (id \(id))") {
            Self.isReply($0, to: id)
        }
    }

    /// `request`, but the reply must be `"ok": true`; otherwise throws `.unexpectedMessage` showing the reply.
    /// For test setup steps whose success is not what the test is about.
    public func requestOK(_ op: String, _ fields: [String: Any] = [:], timeout: Double? = nil) throws
        -> [String: Any]
    {
        let reply = try request(op, fields, timeout: timeout)
        guard reply["ok"] as? Bool == true else {
            throw TestClientError.unexpectedMessage("\(op) failed: \(Self.describe(reply))")
        }
        return reply
    }

    /// The reply (an object with this `id` and no `ev`) to a request the test sent itself, e.g. with `sendLines`.
    public func nextReply(id: Int, timeout: Double? = nil) throws -> [String: Any] {
        try takeFirst(timeout: timeout, waitingFor: "the reply with id \(id)") { Self.isReply($0, to: id) }
    }

    /// The next queued or arriving object whose `"ev"` is `name`; other objects stay queued in order.
    public func nextEvent(_ name: String, timeout: Double? = nil) throws -> [String: Any] {
        try takeFirst(timeout: timeout, waitingFor: "event \"\(name)\"") { $0["ev"] as? String == name }
    }

    /// Reads until the connection closes, discarding any messages that arrive first, and returns the close code
    /// and reason (`code` nil if the server dropped TCP without a close frame). Objects already queued stay queued.
    @discardableResult
    public func expectClose(timeout: Double? = nil) throws -> (code: UInt16?, reason: String) {
        let seconds = timeout ?? defaultTimeout
        let deadline = Deadline(seconds: seconds)
        while true {
            if case .close(let code, let reason) = try receive(
                deadline: deadline, waitingFor: "the connection to close (\(seconds)s)")
            {
                return (code, reason)
            }
        }
    }

    /// Objects received but not yet returned, oldest first (handy in assertion messages).
    public var queuedObjects: [[String: Any]] { pendingObjects }

    /// Compact JSON for an object, for assertion messages.
    public static func describe(_ object: Any) -> String {
        guard JSONSerialization.isValidJSONObject(object),
            let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        else { return String(describing: object) }
        return String(decoding: data, as: UTF8.self)
    }

    // MARK: - Internals

    static func isReply(_ object: [String: Any], to id: Int) -> Bool {
        object["ev"] == nil && (object["id"] as? Int) == id
    }

    /// One line of compact JSON (JSONSerialization escapes control characters, so it contains no "\n").
    static func jsonLine(_ object: [String: Any]) throws -> String {
        guard JSONSerialization.isValidJSONObject(object) else {
            throw TestClientError.invalidArgument("not representable as JSON: \(object)")
        }
        let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        return String(decoding: data, as: UTF8.self)
    }

    /// Removes and returns the first queued object matching `predicate`, receiving frames until one arrives.
    private func takeFirst(timeout: Double?, waitingFor what: String, where predicate: ([String: Any]) -> Bool)
        throws -> [String: Any]
    {
        let seconds = timeout ?? defaultTimeout
        let deadline = Deadline(seconds: seconds)
        var scanned = 0
        while true {
            if let index = pendingObjects[scanned...].firstIndex(where: predicate) {
                return pendingObjects.remove(at: index)
            }
            scanned = pendingObjects.count
            let message: Incoming
            do {
                message = try receive(deadline: deadline, waitingFor: what)
            } catch let error as TestClientError where error.isTimeout {
                let queued =
                    pendingObjects.isEmpty
                    ? "nothing queued"
                    : "queued: " + pendingObjects.map { Self.describe($0) }.joined(separator: ", ")
                throw TestClientError.timeout("waiting \(seconds)s for \(what) on port \(port); \(queued)")
            }
            switch message {
            case .text(let text):
                pendingObjects += try Self.parseLines(text)
            case .binary(let bytes):
                throw TestClientError.unexpectedMessage(
                    "binary frame of \(bytes.count) bytes while waiting for \(what)")
            case .close(let code, let reason):
                throw TestClientError.closed(code: code, reason: reason)
            }
        }
    }

    /// Splits a text frame on "\n" and parses each non-empty line as a JSON object.
    static func parseLines(_ text: String) throws -> [[String: Any]] {
        var objects: [[String: Any]] = []
        for line in text.split(omittingEmptySubsequences: true, whereSeparator: { $0 == "\n" || $0 == "\r\n" }) {
            let trimmed = line.trimmingCharacters(in: .whitespacesAndNewlines)
            if trimmed.isEmpty { continue }
            guard let object = try? JSONSerialization.jsonObject(with: Data(trimmed.utf8)) as? [String: Any] else {
                throw TestClientError.malformedJSON("line is not a JSON object: \(trimmed.prefix(500))")
            }
            objects.append(object)
        }
        return objects
    }
}
