// Another node's side of the live map, recorded: what the live map handed to other nodes through the `RemoteFanOut`
// seam, for the live map's and the friend graph's tests across nodes.
public import CairnCore
public import CairnLiveMap
public import CairnLoop
public import CairnSocial

/// Records what the live map handed to other nodes.
public final class RecordingRemote: RemoteFanOut {
    public init() {}

    public struct Move: Equatable {
        public var owner: Int64
        public var precise: [Int64]
        public var approximate: [Int64]
        public var preciseFix: Fix
        public var approximateFix: Fix?
    }

    public var moves: [Move] = []
    public var shown: [(position: VisiblePosition, viewer: Int64)] = []
    public var hidden: [String] = []
    public var withdrawn: [String] = []
    public var watched: [(ConnectionID, Int64, ShareLevel)] = []
    public var following: Set<String> = []

    public var wanted: [String] = []

    public func follow(_ owner: Int64, viewer: Int64) -> Bool { following.insert("\(owner)>\(viewer)").inserted }
    public func positionWanted(owner: Int64, by viewer: Int64) { wanted.append("\(owner)>\(viewer)") }
    public func unfollow(_ owner: Int64, viewer: Int64) { following.remove("\(owner)>\(viewer)") }
    public func positionMoved(_ move: inout PositionFanOut, precise: [Int64], approximate: [Int64]) {
        moves.append(
            Move(
                owner: move.owner, precise: precise.sorted(), approximate: approximate.sorted(),
                preciseFix: move.precise, approximateFix: approximate.isEmpty ? nil : move.approximate))
    }
    public func positionShown(_ position: VisiblePosition, to viewer: Int64) { shown.append((position, viewer)) }
    public func positionHidden(owner: Int64, from viewer: Int64) { hidden.append("\(owner)>\(viewer)") }
    public func positionWithdrawn(owner: Int64, from viewer: Int64) { withdrawn.append("\(owner)>\(viewer)") }
    public func watchStarted(_ connection: ConnectionID, viewer: Int64, level: (Int64) -> ShareLevel) {
        watched.append((connection, viewer, level(1)))
    }
}
