// What makes a message on the nodes' Redis channels one that a node sent: every payload published carries a tag, a
// keyed MAC of the channel's name and the payload under a key only the nodes hold, and a message whose tag does not
// verify is dropped before anything reads it. Whoever can merely reach Redis can still read what the nodes say and
// replay a genuine message on its own channel, but cannot make one up, alter one, or move one to another channel
// (another node's inbox, another user's channel). The MAC itself is handed in (HMAC-SHA-256 in the composition):
// this layer knows bytes, not crypto.
//
// Layout: payload | tag (`tagLength` bytes), tag = MAC(channel name | 0x00 | payload).

/// Seals and opens the payloads of one cluster's channels.
public struct MessageSeal: Sendable {
    /// The tag's size (HMAC-SHA-256).
    public static let tagLength = 32
    private let mac: @Sendable ([UInt8]) -> [UInt8]

    /// A seal computing tags with `mac` (which must answer `tagLength` bytes).
    public init(mac: @escaping @Sendable ([UInt8]) -> [UInt8]) {
        self.mac = mac
    }

    /// `payload` with its tag for `channel` appended.
    public func sealed(_ payload: [UInt8], channel: String) -> [UInt8] {
        let tag = self.tag(payload[...], channel: channel)
        var out: [UInt8] = []
        out.reserveCapacity(payload.count + Self.tagLength)
        out.append(contentsOf: payload)
        out.append(contentsOf: tag)
        return out
    }

    /// The payload of `bytes` heard on `channel`, or nil when its tag is missing or does not verify.
    public func opened(_ bytes: [UInt8], channel: String) -> [UInt8]? {
        guard bytes.count >= Self.tagLength else { return nil }
        let split = bytes.count - Self.tagLength
        let expected = tag(bytes[..<split], channel: channel)
        guard expected.count == Self.tagLength else { return nil }
        var difference: UInt8 = 0  // compared in constant time
        for i in 0..<Self.tagLength { difference |= expected[i] ^ bytes[split + i] }
        return difference == 0 ? Array(bytes[..<split]) : nil
    }

    private func tag(_ payload: ArraySlice<UInt8>, channel: String) -> [UInt8] {
        var input: [UInt8] = []
        input.reserveCapacity(channel.utf8.count + 1 + payload.count)
        input.append(contentsOf: channel.utf8)
        input.append(0)
        input.append(contentsOf: payload)
        return mac(input)
    }
}
