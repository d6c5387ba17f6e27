// The live-settings registry without the wire: a registered setting hands its default to its feature at once; a
// stored override reaches it whether it was restored before or after the registration; an override that no longer
// fits (out of bounds, wrong type) leaves the default in force; the check names the key of the first problem and
// refuses unknown and repeated keys; changes are written one at a time, in order.
import CairnCore
import CairnHubTestSupport
import Testing

@testable import CairnAdmin

@MainActor
@Suite(.timeLimit(.minutes(5)))
struct AdminSettingsTests {
    @Test func aSettingHearsItsDefaultThenItsStoredValueWhicheverComesFirst() {
        let settings = AdminSettings()
        var early: [Int64] = []
        settings.registerInteger("early", range: 1...100, default: 10, help: "") { early.append($0) }
        #expect(early == [10])
        settings.restore(["early": "20", "late": "false", "gone": "1"])
        #expect(early == [10, 20])
        var late: [Bool] = []
        settings.registerBoolean("late", default: true, help: "") { late.append($0) }
        #expect(late == [false])
        #expect(settings.value("late") == .boolean(false))
        #expect(settings.current.map(\.key) == ["early", "late"])
    }

    @Test func aStoredValueThatNoLongerFitsLeavesTheDefault() {
        let settings = AdminSettings()
        settings.restore(["limit": "5000", "flag": "yes", "number": "twelve"])
        var limit: [Int64] = []
        settings.registerInteger("limit", range: 1...1000, default: 100, help: "") { limit.append($0) }
        var flag: [Bool] = []
        settings.registerBoolean("flag", default: true, help: "") { flag.append($0) }
        settings.registerInteger("number", range: 0...99, default: 7, help: "") { _ in }
        #expect(limit == [100] && flag == [true] && settings.value("number") == .integer(7))
    }

    @Test func theCheckNamesTheKeyOfTheFirstProblem() throws {
        let settings = AdminSettings()
        settings.registerInteger("limit", range: 1...1000, default: 100, help: "") { _ in }
        settings.registerBoolean("flag", default: true, help: "") { _ in }
        func problem(_ changes: [AdminSettingChange]) -> String? {
            do {
                _ = try settings.check(changes)
                return nil
            } catch { return error.message }
        }
        #expect(problem([("limit", .integer(0))]) == "setting 'limit' must be 1–1000")
        #expect(problem([("limit", .boolean(true))]) == "setting 'limit' must be an integer")
        #expect(problem([("flag", .integer(1))]) == "setting 'flag' must be a boolean")
        #expect(problem([("other", .integer(1))]) == "unknown setting 'other' (known: limit, flag)")
        #expect(problem([("limit", .integer(5)), ("limit", nil)]) == "setting 'limit' given twice")
        #expect(problem([]) == "field 'settings' must name at least one setting")
        let checked = try settings.check([("limit", nil), ("flag", .boolean(false))])
        #expect(checked.map(\.1) == [.integer(100), .boolean(false)])
        #expect(settings.value("flag") == .boolean(true))  // checking changes nothing
    }

    @Test func changesAreWrittenOneAtATimeInOrder() {
        let settings = AdminSettings()
        var order: [String] = []
        var finishFirst: (() -> Void)?
        settings.oneAtATime { finished in
            order.append("first")
            finishFirst = finished
        }
        settings.oneAtATime { finished in
            order.append("second")
            finished()
        }
        #expect(order == ["first"])
        finishFirst?()
        #expect(order == ["first", "second"])
    }
}
