// A command that ran but could not do its job (the hub refused, the user does not exist) fails with a plain
// message and exit status 1; ArgumentParser's ValidationError is kept for bad options, which also print usage, and
// is thrown only from `validate()`: thrown from `run()` it would print the root command's usage instead.
import ArgumentParser

/// A failure printed as its message; the command exits 1.
struct CommandFailure: Error, CustomStringConvertible {
    /// What went wrong.
    let description: String

    /// Creates the failure.
    init(_ description: String) { self.description = description }
}
