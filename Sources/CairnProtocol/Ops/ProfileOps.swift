// Profile ops (seeds 000, 003): `profile.set` changes the caller's name, bio and photo and answers the full
// profile; `user.get` reads anyone's by id. In `profile.set` an absent field is kept and `null` removes a bio or a
// photo (a name cannot be removed).
import CairnProfiles
import CairnWire

enum ProfileOps {
    static func register(in table: inout OpTable, profiles: Profiles) {
        table.slow(
            "profile.set",
            decode: { m throws(WireError) in
                if m.isNull("name") { throw .badRequest("field 'name' cannot be removed; send a new name") }
                return ProfileRequest(
                    name: try m.string("name"), bio: try nullable(m, "bio"), photo: try nullable(m, "photo"))
            },
            handle: { caller, request, done in profiles.set(caller.member, request, done) },
            encode: { view, w in
                w.key("user")
                view.write(to: &w)
            })
        table.slow(
            "user.get", decode: Fields.userID,
            handle: { caller, user, done in profiles.get(caller.member, user: user, done) },
            encode: { view, w in
                w.key("user")
                view.write(to: &w)
            })
    }

    /// nil when absent, `.some(nil)` when null, else the string.
    private static func nullable(_ m: borrowing Message, _ key: String) throws(WireError) -> String?? {
        guard m.contains(key) else { return nil }
        if m.isNull(key) { return .some(nil) }
        return .some(try m.string(key))
    }
}
