// The binary message one node publishes on a subject's channel (`<prefix>:u:<user>`, `<prefix>:i:<item>`) for the
// other nodes: whose it is, what kind of news, and up to four sections, each a tag (which version: precise,
// approximate), the ids of the recipients allowed it and the payload they get, as opaque bytes. The cluster layer
// knows no domain and no JSON: the kinds, tags and payloads mean something only to the glue that made them. Compact
// and versioned; decoding checks every length against what is left, so a truncated, padded or foreign message is
// refused (nil), never trusted.
//
// Layout (integers little-endian), version 1:
//   u8 version (1) | u8 kind | i64 subject | u8 section count (0...4)
//   per section: u8 tag | u32 recipient count | i64 × count recipients | u32 payload length | payload
// and nothing after the last section.
//
// Kinds in use (the glue's codes, CairnProtocol): 1 a position shown, 2 hidden, 3 withdrawn (users' channels), 4 an
// item moved (items' channels), 5 news for users (nodes' inboxes, `NodeInbox`). A new kind keeps version 1, the
// layout being the same: a node that does not know a kind ignores it. Only a change of layout raises the version.

/// One message on a subject's channel.
public struct FanOutMessage: Equatable, Sendable {
    /// The format's version; a message with another is refused.
    public static let version: UInt8 = 1
    /// The most sections a message may carry.
    public static let maxSections = 4

    /// One version of the news and who may have it.
    public struct Section: Equatable, Sendable {
        /// Which version (the glue's code).
        public var tag: UInt8
        /// Who may have it.
        public var recipients: [Int64]
        /// The bytes they get.
        public var payload: [UInt8]

        /// Creates the section.
        public init(tag: UInt8, recipients: [Int64], payload: [UInt8]) {
            self.tag = tag
            self.recipients = recipients
            self.payload = payload
        }
    }

    /// What kind of news (the glue's code).
    public var kind: UInt8
    /// Whose channel it belongs to.
    public var subject: Int64
    /// The versions, each with its recipients.
    public var sections: [Section]

    /// Creates the message.
    public init(kind: UInt8, subject: Int64, sections: [Section]) {
        self.kind = kind
        self.subject = subject
        self.sections = sections
    }

    /// The message's bytes (one allocation, sized up front). At most `maxSections` sections are written.
    public func encoded() -> [UInt8] {
        let written = sections.prefix(Self.maxSections)
        var size = 11
        for section in written { size += 9 + section.recipients.count * 8 + section.payload.count }
        var out: [UInt8] = []
        out.reserveCapacity(size)
        out.append(Self.version)
        out.append(kind)
        Self.append(UInt64(bitPattern: subject), bytes: 8, to: &out)
        out.append(UInt8(written.count))
        for section in written {
            out.append(section.tag)
            Self.append(UInt64(section.recipients.count), bytes: 4, to: &out)
            for recipient in section.recipients { Self.append(UInt64(bitPattern: recipient), bytes: 8, to: &out) }
            Self.append(UInt64(section.payload.count), bytes: 4, to: &out)
            out.append(contentsOf: section.payload)
        }
        return out
    }

    /// The largest message decoded (a few thousand viewers and two payloads fit many times over); anything longer
    /// is refused before it is read.
    public static let maxBytes = 1 << 20

    /// Decodes `bytes`, or nil when they are not exactly one well-formed version-1 message.
    public init?(decoding bytes: [UInt8]) {
        guard bytes.count <= Self.maxBytes else { return nil }
        var reader = Reader(bytes: bytes)
        guard reader.u8() == Self.version, let kind = reader.u8(), let subject = reader.integer(8),
            let count = reader.u8(), Int(count) <= Self.maxSections
        else { return nil }
        var sections: [Section] = []
        sections.reserveCapacity(Int(count))
        for _ in 0..<count {
            guard let tag = reader.u8(), let recipientCount = reader.integer(4),
                recipientCount <= UInt64(reader.remaining / 8)
            else { return nil }
            var recipients: [Int64] = []
            recipients.reserveCapacity(Int(recipientCount))
            for _ in 0..<recipientCount {
                guard let recipient = reader.integer(8) else { return nil }
                recipients.append(Int64(bitPattern: recipient))
            }
            guard let length = reader.integer(4), length <= UInt64(reader.remaining) else { return nil }
            sections.append(Section(tag: tag, recipients: recipients, payload: reader.take(Int(length))))
        }
        guard reader.remaining == 0 else { return nil }
        self.init(kind: kind, subject: Int64(bitPattern: subject), sections: sections)
    }

    private static func append(_ value: UInt64, bytes: Int, to out: inout [UInt8]) {
        for shift in 0..<bytes { out.append(UInt8(truncatingIfNeeded: value >> UInt64(shift * 8))) }
    }

    /// Reads from the front of the bytes; every read checks what is left.
    private struct Reader {
        let bytes: [UInt8]
        var at = 0
        var remaining: Int { bytes.count - at }

        mutating func u8() -> UInt8? {
            guard remaining >= 1 else { return nil }
            defer { at += 1 }
            return bytes[at]
        }

        mutating func integer(_ size: Int) -> UInt64? {
            guard remaining >= size else { return nil }
            var value: UInt64 = 0
            for i in 0..<size { value |= UInt64(bytes[at + i]) << UInt64(i * 8) }
            at += size
            return value
        }

        mutating func take(_ count: Int) -> [UInt8] {
            defer { at += count }
            return Array(bytes[at..<at + count])
        }
    }
}
