// Why this exists: the RFC 6455 framing rules in one place — encoding client frames (always masked, unless a test
// deliberately builds a broken one for `WebSocketClient.sendRaw`) and strictly decoding server frames, so that a
// server bug (a masked server frame, reserved bits, a fragmented control frame) fails the test loudly.

/// One WebSocket frame. Public so malformed-frame tests can build exactly the bytes they want:
/// `try client.sendRaw(WebSocketFrame(rawOpcode: 0x3, payload: []).encoded())`.
public struct WebSocketFrame: Equatable, Sendable {
    /// The opcodes RFC 6455 defines.
    public enum Opcode: UInt8, Sendable {
        case continuation = 0x0
        case text = 0x1
        case binary = 0x2
        case close = 0x8
        case ping = 0x9
        case pong = 0xA

        /// Close, ping and pong.
        public var isControl: Bool { rawValue & 0x8 != 0 }
    }

    /// FIN bit: this is the last frame of a message.
    public var fin: Bool
    /// The three RSV bits, as a value in 0...7 (RSV1 is 4). Must be 0 without negotiated extensions.
    public var rsv: UInt8
    /// The raw 4-bit opcode; `opcode` interprets it.
    public var rawOpcode: UInt8
    /// The unmasked payload.
    public var payload: [UInt8]

    /// The opcode, or nil for a reserved one.
    public var opcode: Opcode? { Opcode(rawValue: rawOpcode) }

    /// A frame with a known opcode.
    public init(opcode: Opcode, payload: [UInt8], fin: Bool = true) {
        self.init(rawOpcode: opcode.rawValue, payload: payload, fin: fin)
    }

    /// Any frame, including reserved opcodes or RSV bits (for tests of the server's error handling).
    public init(rawOpcode: UInt8, payload: [UInt8], fin: Bool = true, rsv: UInt8 = 0) {
        self.fin = fin
        self.rsv = rsv & 0x7
        self.rawOpcode = rawOpcode & 0xF
        self.payload = payload
    }

    /// The frame's wire bytes as a client sends them: masked with a fresh random key. Pass `masked: false` for an
    /// unmasked frame (which a server must reject), or `mask:` to choose the 4-byte key.
    public func encoded(masked: Bool = true, mask: [UInt8]? = nil) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(payload.count + 14)
        out.append((fin ? 0x80 : 0) | (rsv << 4) | rawOpcode)
        let maskBit: UInt8 = masked ? 0x80 : 0
        let length = payload.count
        if length < 126 {
            out.append(maskBit | UInt8(length))
        } else if length <= 0xFFFF {
            out.append(maskBit | 126)
            out.append(UInt8(length >> 8))
            out.append(UInt8(length & 0xFF))
        } else {
            out.append(maskBit | 127)
            for shift in stride(from: 56, through: 0, by: -8) {
                out.append(UInt8((UInt64(length) >> UInt64(shift)) & 0xFF))
            }
        }
        guard masked else {
            out.append(contentsOf: payload)
            return out
        }
        let key = mask ?? ClientRandom.bytes(4)
        precondition(key.count == 4, "a WebSocket mask is 4 bytes")
        out.append(contentsOf: key)
        for (index, byte) in payload.enumerated() {
            out.append(byte ^ key[index & 3])
        }
        return out
    }

    /// Decodes one server frame from `buffer[start...]`. Returns nil when more bytes are needed, or the frame and
    /// how many bytes it used. Throws `.protocolViolation` for anything a server must not send.
    static func decodeServerFrame(_ buffer: [UInt8], from start: Int, maxPayload: Int) throws
        -> (frame: WebSocketFrame, consumed: Int)?
    {
        let available = buffer.count - start
        guard available >= 2 else { return nil }
        let first = buffer[start]
        let second = buffer[start + 1]
        let fin = first & 0x80 != 0
        let rsv = (first >> 4) & 0x7
        let rawOpcode = first & 0xF
        let masked = second & 0x80 != 0
        var length = UInt64(second & 0x7F)
        var headerLength = 2

        if length == 126 {
            guard available >= 4 else { return nil }
            length = UInt64(buffer[start + 2]) << 8 | UInt64(buffer[start + 3])
            headerLength = 4
        } else if length == 127 {
            guard available >= 10 else { return nil }
            length = 0
            for index in 0..<8 { length = length << 8 | UInt64(buffer[start + 2 + index]) }
            headerLength = 10
            guard length & (1 << 63) == 0 else {
                throw TestClientError.protocolViolation("64-bit payload length with the most significant bit set")
            }
        }

        guard !masked else { throw TestClientError.protocolViolation("server frame is masked") }
        guard rsv == 0 else {
            throw TestClientError.protocolViolation("RSV bits \(rsv) set without a negotiated extension")
        }
        guard let opcode = Opcode(rawValue: rawOpcode) else {
            throw TestClientError.protocolViolation("reserved opcode 0x\(String(rawOpcode, radix: 16))")
        }
        if opcode.isControl {
            guard fin else { throw TestClientError.protocolViolation("fragmented control frame (\(opcode))") }
            guard length <= 125 else {
                throw TestClientError.protocolViolation("control frame (\(opcode)) with \(length)-byte payload")
            }
        }
        guard length <= UInt64(maxPayload) else {
            throw TestClientError.protocolViolation("frame payload of \(length) bytes exceeds the client limit")
        }

        let total = headerLength + Int(length)
        guard available >= total else { return nil }
        let payload = Array(buffer[(start + headerLength)..<(start + total)])
        return (WebSocketFrame(rawOpcode: rawOpcode, payload: payload, fin: fin, rsv: rsv), total)
    }
}
