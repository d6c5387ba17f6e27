// The binary message a node publishes on the control channel (`<prefix>:ctl`) after it committed a change that
// every node keeps in memory (a friendship, a request, a sharing rule): what kind of change, the two ids it is
// about, the versions it was committed with, a small code and an optional time, and who sent it with the id it
// wants acknowledged (0: no acknowledgement). The cluster layer knows no domain: kinds and codes mean something
// only to the glue that made them. Versioned and length-checked: a message of another version, truncated, padded
// or with a node name over 64 bytes is refused (nil), never trusted.
//
// Layout (integers little-endian), version 1:
//   u8 version (1) | u8 kind | i64 subject | i64 other | i64 version | i64 other version | u8 code | u8 flags
//   | i64 time (bit 0 of flags: present) | u64 ack id | u8 node length | node (UTF-8)
// and nothing after.

/// One change on the control channel.
public struct ControlMessage: Equatable, Sendable {
    /// The format's version; a message with another is refused.
    public static let version: UInt8 = 1
    /// The longest node name carried.
    public static let maxNodeBytes = 64
    /// Bytes before the node name.
    static let fixedSize = 1 + 1 + 8 + 8 + 8 + 8 + 1 + 1 + 8 + 8 + 1

    /// What kind of change (the glue's code).
    public var kind: UInt8
    /// The first id it is about.
    public var subject: Int64
    /// The second id it is about.
    public var other: Int64
    /// The version it was committed with.
    public var changeVersion: Int64
    /// A second version (the other direction of a pair).
    public var otherVersion: Int64
    /// A small code (the glue's: a level, a flag).
    public var code: UInt8
    /// A time, if any.
    public var time: Int64?
    /// The id the sender waits to hear acknowledged on its ack channel; 0 when it waits for nothing.
    public var ackID: UInt64
    /// The node that sent it (where acknowledgements go).
    public var node: String

    /// Creates the message.
    public init(
        kind: UInt8, subject: Int64, other: Int64, changeVersion: Int64, otherVersion: Int64 = 0, code: UInt8 = 0,
        time: Int64? = nil, ackID: UInt64 = 0, node: String
    ) {
        self.kind = kind
        self.subject = subject
        self.other = other
        self.changeVersion = changeVersion
        self.otherVersion = otherVersion
        self.code = code
        self.time = time
        self.ackID = ackID
        self.node = node
    }

    /// The message's bytes; a node name is cut to `maxNodeBytes`.
    public func encoded() -> [UInt8] {
        let name = Array(node.utf8.prefix(Self.maxNodeBytes))
        var out: [UInt8] = []
        out.reserveCapacity(Self.fixedSize + name.count)
        out.append(Self.version)
        out.append(kind)
        for value in [subject, other, changeVersion, otherVersion] { Self.append(UInt64(bitPattern: value), to: &out) }
        out.append(code)
        out.append(time == nil ? 0 : 1)
        Self.append(UInt64(bitPattern: time ?? 0), to: &out)
        Self.append(ackID, to: &out)
        out.append(UInt8(name.count))
        out.append(contentsOf: name)
        return out
    }

    /// Decodes `bytes`, or nil when they are not exactly one well-formed version-1 message.
    public init?(decoding bytes: [UInt8]) {
        guard bytes.count >= Self.fixedSize, bytes[0] == Self.version else { return nil }
        let nameLength = Int(bytes[Self.fixedSize - 1])
        guard nameLength <= Self.maxNodeBytes, bytes.count == Self.fixedSize + nameLength else { return nil }
        let flags = bytes[35]
        guard flags <= 1 else { return nil }
        func integer(_ at: Int) -> UInt64 {
            var value: UInt64 = 0
            for i in 0..<8 { value |= UInt64(bytes[at + i]) << UInt64(i * 8) }
            return value
        }
        guard let node = String(validating: bytes[Self.fixedSize...], as: UTF8.self) else { return nil }
        self.init(
            kind: bytes[1], subject: Int64(bitPattern: integer(2)), other: Int64(bitPattern: integer(10)),
            changeVersion: Int64(bitPattern: integer(18)), otherVersion: Int64(bitPattern: integer(26)),
            code: bytes[34], time: flags == 1 ? Int64(bitPattern: integer(36)) : nil, ackID: integer(44), node: node)
    }

    private static func append(_ value: UInt64, to out: inout [UInt8]) {
        for shift in 0..<8 { out.append(UInt8(truncatingIfNeeded: value >> UInt64(shift * 8))) }
    }
}
