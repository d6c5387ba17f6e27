// The kinds of change a node announces to the others on the control channel, in one table: each kind is declared
// here once, with its number on the wire, and names its payload: a struct (next to the port that sends it, in the
// `*Control` files) that reads and writes its fields of the generic `ControlMessage` (CairnCluster) and applies
// the change to this node through the features' own paths. The bytes are those nodes of earlier builds send and
// read, so nodes of mixed builds keep understanding each other (ControlKindTests pins them).
//
// The numbers are the enum's raw values, so a number used twice does not compile, and the switch that names each
// kind's payload is exhaustive. A message of a kind this build does not know (a newer node's), or with a code it
// does not know, is received and ignored, never acknowledged.
import CairnCluster
import CairnHub
import Logging

/// Every kind of control message, by its number on the wire (`ControlMessage.kind`).
enum ControlKind: UInt8, CaseIterable {
    case friendshipBegan = 1
    case friendshipEnded = 2
    case friendRequest = 3
    case shareRule = 4
    case tokenRevoked = 5
    case sessionsEnded = 6
    case positionAsked = 7
    case relicCreated = 8
    case relicDeleted = 9
    case settingsChanged = 10
    case picturePosted = 11
    case bucketTouched = 12
    case itemGone = 13

    /// The payload a message of this kind carries.
    var payload: any ControlPayload.Type {
        switch self {
        case .friendshipBegan: FriendshipBegan.self
        case .friendshipEnded: FriendshipEnded.self
        case .friendRequest: FriendRequest.self
        case .shareRule: ShareRuleChanged.self
        case .tokenRevoked: TokenRevoked.self
        case .sessionsEnded: SessionsEnded.self
        case .positionAsked: PositionAsked.self
        case .relicCreated: RelicCreated.self
        case .relicDeleted: RelicDeleted.self
        case .settingsChanged: SettingsChanged.self
        case .picturePosted: PicturePosted.self
        case .bucketTouched: BucketTouched.self
        case .itemGone: ItemGone.self
        }
    }

    /// The payload `message` carries, or nil when its kind, or a code in it, is not one this build knows.
    static func payload(of message: ControlMessage) -> (any ControlPayload)? {
        guard let kind = ControlKind(rawValue: message.kind) else { return nil }
        return kind.payload.init(fields: message)
    }
}

/// The payload of one kind of control message.
protocol ControlPayload: Equatable {
    /// Its kind, and so its number on the wire.
    static var kind: ControlKind { get }
    /// Reads the payload from a message of its kind; nil when a field holds a value this build does not know.
    init?(fields message: ControlMessage)
    /// Writes the payload's fields into `message` (whose kind is set already; fields it does not use stay 0).
    func write(to message: inout ControlMessage)
    /// Applies the change, committed on another node, to this one.
    func apply(to hub: Hub, logger: Logger)
}

extension ControlPayload {
    /// The message that carries this payload from `node`.
    func message(from node: String) -> ControlMessage {
        var message = ControlMessage(kind: Self.kind.rawValue, subject: 0, other: 0, changeVersion: 0, node: node)
        write(to: &message)
        return message
    }
}

extension ControlChannel {
    /// Publishes `payload`, waiting for nothing; kept until it goes out.
    func publish(_ payload: some ControlPayload) { publish(payload.message(from: node)) }
}
