import CairnCore
// A profile on the wire: the user object `{id, username, name}` with `bio` when there is one and either a signed
// `photo_url` or `"photo_url": null` with `placeholder_url`, the image the hub serves for users without a photo.
import CairnMedia
import CairnProfiles
import CairnWire

extension ProfileView {
    /// Writes `{"id":…,"username":…,"name":…,"bio"?:…,"photo_url":…|null,"placeholder_url"?:…}`.
    func write(to w: inout JSONWriter) {
        let user = profile.user
        w.beginObject()
        w.key("id")
        w.int(user.id)
        w.key("username")
        w.string(user.username)
        w.key("name")
        w.string(user.name)
        if let bio = profile.bio {
            w.key("bio")
            w.string(bio)
        }
        w.key("photo_url")
        if let photoURL {
            w.string(photoURL)
        } else {
            w.null()
            w.key("placeholder_url")
            w.string(Placeholders.user)
        }
        w.endObject()
    }
}
