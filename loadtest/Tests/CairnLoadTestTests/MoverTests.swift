// The random-waypoint model keeps users inside the city box and moves them at their mode's speeds.
import CairnLoadTest
import Testing

@Suite(.timeLimit(.minutes(5)))
struct MoverTests {
    @Test(arguments: TravelMode.allCases)
    func usersStayInTheBoxAndMoveAtTheirModesSpeed(mode: TravelMode) {
        let box = CityBox.paris
        var legs = 0
        for seed in UInt64(1)...20 {
            var mover = Mover(box: box, mode: mode, seed: seed)
            for _ in 0..<2_000 {
                let before = (mover.x, mover.y, mover.legsCompleted)
                #expect(mode.speedRange.contains(mover.speed))
                mover.advance(by: 1)
                let c = mover.coordinate(in: box)
                #expect(box.contains(lat: c.lat, lon: c.lon))
                let dx = mover.x - before.0
                let dy = mover.y - before.1
                let moved = (dx * dx + dy * dy).squareRoot()
                // Straight legs: at most speed × 1 s; a turn at a waypoint can only shorten the straight distance.
                #expect(moved <= mode.speedRange.upperBound * 1 + 1e-6)
                if mover.legsCompleted == before.2 {
                    #expect(abs(moved - mover.speed) < 1e-6, "a second on one leg covers exactly its speed")
                }
            }
            legs += mover.legsCompleted
        }
        #expect(legs > 0, "waypoints are reached and new legs begin")
    }

    @Test func modeMixesDrawEveryModeInProportion() throws {
        let w = try Workload.generate(
            WorkloadPlan(
                users: 10_000, friends: 0, seed: 5,
                modes: ModeMix(weights: [.walking: 1, .driving: 1])))
        let driving = w.movers.filter { $0.mode == .driving }.count
        #expect(!w.movers.contains { $0.mode == .cycling })
        #expect(abs(driving - 5_000) < 300)
        #expect(ModeMix(parsing: "walking=0.6,cycling=0.25,driving=0.15") == .city)
        #expect(ModeMix(parsing: "flying=1") == nil)
        #expect(ModeMix(parsing: "walking=0") == nil)
        #expect(CityBox(parsing: "48.8,2.2,48.9,2.4") == CityBox(minLat: 48.8, minLon: 2.2, maxLat: 48.9, maxLon: 2.4))
        #expect(CityBox(parsing: "48.9,2.2,48.8,2.4") == nil)
    }
}
