// One chat message, as stored and as delivered: it lives in the core because the hub's events carry it
// (`HubEvent.chatMessage`); the chat feature (`Chat`, `ChatStore`) decides who may send and read it.

/// One chat message.
public struct ChatMessage: Sendable, Equatable {
    /// Store-assigned, increasing.
    public var id: Int64
    /// Sender.
    public var from: Int64
    /// Recipient.
    public var to: Int64
    /// The text.
    public var text: String
    /// When the hub accepted it (ms since the epoch).
    public var ts: Int64

    /// Creates the value.
    public init(id: Int64, from: Int64, to: Int64, text: String, ts: Int64) {
        self.id = id
        self.from = from
        self.to = to
        self.text = text
        self.ts = ts
    }
}
