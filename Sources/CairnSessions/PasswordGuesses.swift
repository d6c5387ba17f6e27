// The two limits on guessing the password of one guarded thing (a relic, a private event), kept together so that
// each feature counts a guess the same way: per user and thing (a few wrong ones per window, `LoginLimiter`) and per
// thing across everyone (a doubling back-off, `PasswordBackoff`), both counted before scrypt judges the guess, and
// on top of the connection's own budget of password checks. A guess never judged is handed back; a right one clears
// both counts. Loop thread only.
package import CairnCore
import CairnErrorCodes

/// Counts password guesses at guarded things.
package final class PasswordGuesses {
    private let perUser: LoginLimiter
    private var perThing: PasswordBackoff

    /// `failures` wrong guesses per user and thing within `windowMs`; across users, a back-off after
    /// `freeBeforeBackoff`, from `baseMs` doubling up to `maxMs`.
    package init(failures: Int, windowMs: Int64, freeBeforeBackoff: Int, baseMs: Int64, maxMs: Int64) {
        perUser = LoginLimiter(limit: failures, windowMs: windowMs)
        perThing = PasswordBackoff(free: freeBeforeBackoff, baseMs: baseMs, maxMs: maxMs, windowMs: windowMs)
    }

    private static func key(_ user: Int64, _ thing: Int64) -> String { "\(user)/\(thing)" }

    /// Counts a guess by `user` at `thing`, or says why it may not be made: `rate_limited` with `retry_after_ms`
    /// ("too many wrong passwords for `what`") while either limit holds, or `spendBudget`'s refusal (the
    /// connection's password checks). Nothing is counted when it is refused.
    package func begin(
        user: Int64, thing: Int64, now: Int64, what: String, spendBudget: () -> DomainError?
    ) -> DomainError? {
        let key = Self.key(user, thing)
        if let wait = perUser.retryAfter(key, now: now) ?? perThing.attempt(thing, now: now) {
            return DomainError(
                .rateLimited, "too many wrong passwords for \(what); try again in \((wait + 999) / 1000) s"
            )
            .with(.init("retry_after_ms", wait))
        }
        if let refusal = spendBudget() {
            perThing.forgive(thing)
            return refusal
        }
        if let wait = perUser.attempt(key, now: now) {  // not blocked a moment ago: cannot happen
            perThing.forgive(thing)
            return DomainError(.rateLimited, "too many wrong passwords for \(what)").with(.init("retry_after_ms", wait))
        }
        return nil
    }

    /// The guess begun at `at` was never judged (the thing vanished, the store failed): it does not count.
    package func unjudged(user: Int64, thing: Int64, at: Int64) {
        perUser.forgive(Self.key(user, thing), at: at)
        perThing.forgive(thing)
    }

    /// The right password: this user needs no more guesses at `thing`, and `thing` no back-off.
    package func succeeded(user: Int64, thing: Int64) {
        perUser.reset(Self.key(user, thing))
        perThing.succeeded(thing)
    }

    /// `thing` is gone.
    package func forget(_ thing: Int64) { perThing.forget(thing) }
}
