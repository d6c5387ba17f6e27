// The random-waypoint movement model: a user walks (or cycles, or drives) in a straight line to a random point of
// the city box at a speed drawn from its mode's range, then picks the next point. Everything comes from a seeded
// generator and the elapsed time, so the path for a seed is the same on every run and for every server.
import CairnSeed

/// One user's movement, in metres from the box's south-west corner.
public struct Mover: Sendable {
    /// How this user travels.
    public let mode: TravelMode
    /// Metres east of the west edge.
    public private(set) var x: Double
    /// Metres north of the south edge.
    public private(set) var y: Double
    /// Speed of the current leg, m/s.
    public private(set) var speed: Double
    /// Waypoints reached so far.
    public private(set) var legsCompleted = 0
    private var targetX: Double
    private var targetY: Double
    private let width: Double
    private let height: Double
    private var rng: SplitMix64

    /// Starts at a random point of `box` with a first waypoint and speed drawn from `seed`.
    public init(box: CityBox, mode: TravelMode, seed: UInt64) {
        rng = SplitMix64(seed: seed)
        self.mode = mode
        width = box.widthMetres
        height = box.heightMetres
        x = unitInterval(&rng) * width
        y = unitInterval(&rng) * height
        targetX = 0
        targetY = 0
        speed = 0
        pickLeg()
    }

    private mutating func pickLeg() {
        targetX = unitInterval(&rng) * width
        targetY = unitInterval(&rng) * height
        let range = mode.speedRange
        speed = range.lowerBound + unitInterval(&rng) * (range.upperBound - range.lowerBound)
    }

    /// Moves on for `seconds`, turning at each waypoint reached on the way.
    public mutating func advance(by seconds: Double) {
        var left = max(0, seconds) * speed  // metres still to travel at the current leg's speed
        while left > 0 {
            let dx = targetX - x
            let dy = targetY - y
            let distance = (dx * dx + dy * dy).squareRoot()
            if distance > left {
                x += dx / distance * left
                y += dy / distance * left
                return
            }
            x = targetX
            y = targetY
            let timeUsed = distance / speed
            let timeLeft = left / speed - timeUsed
            legsCompleted += 1
            pickLeg()
            left = timeLeft * speed
        }
    }

    /// The current position as latitude and longitude inside `box` (the box the mover was made for).
    public func coordinate(in box: CityBox) -> (lat: Double, lon: Double) {
        box.coordinate(x: min(max(x, 0), width), y: min(max(y, 0), height))
    }
}
