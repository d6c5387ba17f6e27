// The table of control kinds: every kind has one number and one payload, the payload of each kind is written in
// exactly the bytes earlier builds send (pinned here field by field: version, kind, subject, other, version, other
// version, code, flags, time, ack id, node), and read back from them as it was; a kind or a code this build does not
// know is not read (received and ignored); a payload heard is applied to the feature it is about.
import CairnCluster
import CairnHub
import Logging
import Testing

@testable import CairnCore
@testable import CairnNodes
@testable import CairnSessions
@testable import CairnSocial

@MainActor
@Suite(.timeLimit(.minutes(5)))
struct ControlKindTests {
    /// Each kind's payload, and the bytes it travels as from node "n1" (hex; spaces between fields).
    static let pinned: [(any ControlPayload, String)] = [
        (
            FriendshipBegan(a: 3, b: 4, version: 1_700_000_000_123_000, crossed: true),
            "01 01 0300000000000000 0400000000000000 78202018240a0600"
                + "0000000000000000 01 00 0000000000000000 0000000000000000 02 6e31"
        ),
        (
            FriendshipBegan(a: 3, b: 4, version: 5, crossed: false),
            "01 01 0300000000000000 0400000000000000 0500000000000000"
                + "0000000000000000 00 00 0000000000000000 0000000000000000 02 6e31"
        ),
        (
            FriendshipEnded(a: 3, b: 4, versionAB: 11, versionBA: 12),
            "01 02 0300000000000000 0400000000000000 0b00000000000000"
                + "0c00000000000000 00 00 0000000000000000 0000000000000000 02 6e31"
        ),
        (
            FriendRequest(from: 5, to: 6, pending: true, version: 21),
            "01 03 0500000000000000 0600000000000000 1500000000000000"
                + "0000000000000000 01 00 0000000000000000 0000000000000000 02 6e31"
        ),
        (
            FriendRequest(from: 5, to: 6, pending: false, version: 22),
            "01 03 0500000000000000 0600000000000000 1600000000000000"
                + "0000000000000000 00 00 0000000000000000 0000000000000000 02 6e31"
        ),
        (
            ShareRuleChanged(owner: 7, viewer: 8, level: .approximate, until: 1_800_000, version: 31),
            "01 04 0700000000000000 0800000000000000 1f00000000000000"
                + "0000000000000000 02 01 40771b0000000000 0000000000000000 02 6e31"
        ),
        (
            ShareRuleChanged(owner: 7, viewer: nil, level: .hidden, until: nil, version: 32),
            "01 04 0700000000000000 0000000000000000 2000000000000000"
                + "0000000000000000 03 00 0000000000000000 0000000000000000 02 6e31"
        ),
        (
            ShareRuleChanged(owner: 7, viewer: 8, level: nil, until: nil, version: 33),
            "01 04 0700000000000000 0800000000000000 2100000000000000"
                + "0000000000000000 00 00 0000000000000000 0000000000000000 02 6e31"
        ),
        (
            ShareRuleChanged(owner: 7, viewer: 8, level: .precise, until: nil, version: 34),
            "01 04 0700000000000000 0800000000000000 2200000000000000"
                + "0000000000000000 01 00 0000000000000000 0000000000000000 02 6e31"
        ),
        (
            TokenRevoked(user: 9, fingerprint: TokenFingerprint(high: -2, low: 0x0102_0304_0506_0708)),
            "01 05 0900000000000000 feffffffffffffff 0000000000000000"
                + "0807060504030201 00 00 0000000000000000 0000000000000000 02 6e31"
        ),
        (
            SessionsEnded(user: 10, why: .suspended),
            "01 06 0a00000000000000 0000000000000000 0000000000000000"
                + "0000000000000000 02 00 0000000000000000 0000000000000000 02 6e31"
        ),
        (
            SessionsEnded(user: 10, why: .tokenRevoked),
            "01 06 0a00000000000000 0000000000000000 0000000000000000"
                + "0000000000000000 01 00 0000000000000000 0000000000000000 02 6e31"
        ),
        (
            PositionAsked(owner: 11, viewer: 12),
            "01 07 0b00000000000000 0c00000000000000 0000000000000000"
                + "0000000000000000 00 00 0000000000000000 0000000000000000 02 6e31"
        ),
        (
            RelicCreated(id: 13),
            "01 08 0d00000000000000 0000000000000000 0000000000000000"
                + "0000000000000000 00 00 0000000000000000 0000000000000000 02 6e31"
        ),
        (
            RelicDeleted(id: 14),
            "01 09 0e00000000000000 0000000000000000 0000000000000000"
                + "0000000000000000 00 00 0000000000000000 0000000000000000 02 6e31"
        ),
        (
            SettingsChanged(),
            "01 0a 0000000000000000 0000000000000000 0000000000000000"
                + "0000000000000000 00 00 0000000000000000 0000000000000000 02 6e31"
        ),
        (
            PicturePosted(id: 15),
            "01 0b 0f00000000000000 0000000000000000 0000000000000000"
                + "0000000000000000 00 00 0000000000000000 0000000000000000 02 6e31"
        ),
        (
            BucketTouched(id: 16),
            "01 0c 1000000000000000 0000000000000000 0000000000000000"
                + "0000000000000000 00 00 0000000000000000 0000000000000000 02 6e31"
        ),
        (
            ItemGone(id: 17),
            "01 0d 1100000000000000 0000000000000000 0000000000000000"
                + "0000000000000000 00 00 0000000000000000 0000000000000000 02 6e31"
        ),
    ]

    static func bytes(_ hex: String) -> [UInt8] {
        let digits = Array(hex.filter { $0 != " " })
        return stride(from: 0, to: digits.count, by: 2).map { UInt8(String(digits[$0...$0 + 1]), radix: 16)! }
    }

    static func matches<P: ControlPayload>(_ payload: P, _ other: (any ControlPayload)?) -> Bool {
        (other as? P) == payload
    }

    @Test func everyKindHasOneNumberAndOnePayloadOfItsOwn() {
        #expect(ControlKind.allCases.map(\.rawValue) == Array(1...13))
        for kind in ControlKind.allCases {
            #expect(kind.payload.kind == kind, "\(kind)'s payload declares \(kind.payload.kind)")
        }
        let payloads = Set(ControlKind.allCases.map { ObjectIdentifier($0.payload) })
        #expect(payloads.count == ControlKind.allCases.count)
    }

    @Test func eachKindTravelsInTheBytesEarlierBuildsUse() throws {
        var kinds: Set<ControlKind> = []
        for (payload, hex) in Self.pinned {
            kinds.insert(type(of: payload).kind)
            let expected = Self.bytes(hex)
            #expect(payload.message(from: "n1").encoded() == expected, "\(payload)")
            let message = try #require(ControlMessage(decoding: expected))
            let readBack = Self.matches(payload, ControlKind.payload(of: message))
            #expect(readBack, "\(payload) read back from its bytes")
        }
        #expect(kinds == Set(ControlKind.allCases))
    }

    @Test func aKindOrACodeThisBuildDoesNotKnowIsNotRead() {
        func message(_ kind: UInt8, code: UInt8 = 0) -> ControlMessage {
            ControlMessage(kind: kind, subject: 1, other: 2, changeVersion: 3, code: code, node: "n2")
        }
        for kind: UInt8 in [0, 14, 200, 255] { #expect(ControlKind.payload(of: message(kind)) == nil) }
        #expect(ControlKind.payload(of: message(1, code: 2)) == nil)  // friendship: 0 or 1
        #expect(ControlKind.payload(of: message(3, code: 2)) == nil)  // request: 0 or 1
        #expect(ControlKind.payload(of: message(4, code: 4)) == nil)  // rule: levels 0 to 3
        #expect(ControlKind.payload(of: message(6, code: 0)) == nil)  // sessions ended: 1 or 2
        #expect(ControlKind.payload(of: message(6, code: 3)) == nil)
        #expect(ControlKind.payload(of: message(4, code: 3)) != nil)
    }

    @Test func aRuleHeardIsAppliedToTheSocialFeature() throws {
        let h = NodeHarness()
        let now = h.clock.now()
        #expect(h.hub.social.level(owner: 1, viewer: 2, now: now) == .precise)
        let sent = ShareRuleChanged(owner: 1, viewer: 2, level: .hidden, until: nil, version: 10)
        let message = try #require(ControlMessage(decoding: sent.message(from: "n2").encoded()))
        let heard = try #require(ControlKind.payload(of: message))
        heard.apply(to: h.hub, logger: Logger(label: "test"))
        #expect(h.hub.social.level(owner: 1, viewer: 2, now: now) == .hidden)
    }
}
