// Pictures and events on the wire. A picture is the contract's `{id, by, caption?, event?, lat?, lon?, distance?,
// likes, liked, created, url}` plus `download_url` (the same signed URL served as an attachment) and `private` for
// a private event's picture; `by` is the poster as a user object. An event is `{id, tag, title?, owner, private,
// created, member, pictures}`.
import CairnCore
import CairnGeo
import CairnPictures
import CairnWire

extension PictureView {
    /// The picture object.
    func write(to w: inout JSONWriter) {
        w.beginObject()
        w.field("id", record.id)
        w.key("by")
        record.by.write(to: &w)
        w.field("caption", record.caption)
        if let event = record.event {
            w.field("event", event.tag)
            if event.isPrivate { w.field("private", true) }
        }
        if let point = record.point {
            w.field("lat", point.lat)
            w.field("lon", point.lon)
        }
        if let distance { w.field("distance", distance.rounded()) }
        w.field("likes", record.likes)
        w.field("liked", record.liked)
        w.field("created", record.createdAt)
        w.field("url", url)
        w.field("download_url", downloadURL)
        if record.hidden { w.field("hidden", true) }  // only admins are shown hidden pictures
        w.endObject()
    }
}

extension PicturePage {
    /// `pictures: [...]` and `cursor` when there is a next page.
    func write(to w: inout JSONWriter) {
        w.array("pictures", pictures) { picture, w in picture.write(to: &w) }
        w.field("cursor", cursor)
    }
}

extension EventInfo {
    /// The event object.
    func write(to w: inout JSONWriter) {
        w.beginObject()
        w.field("id", id)
        w.field("tag", tag)
        w.field("title", title)
        w.key("owner")
        owner.write(to: &w)
        w.field("private", isPrivate)
        w.field("created", createdAt)
        w.field("member", member)
        w.field("pictures", pictures)
        w.endObject()
    }
}

extension ReportedPicture {
    /// `{picture, reports: [{reporter: user, reason, text?, created, resolved}]}` for the admins' queue.
    func write(to w: inout JSONWriter) {
        w.beginObject()
        w.key("picture")
        picture.write(to: &w)
        w.key("reports")
        w.beginArray()
        for report in reports {
            w.beginObject()
            w.key("reporter")
            report.reporter.write(to: &w)
            w.field("reason", report.reason)
            w.field("text", report.text)
            w.field("created", report.createdAt)
            w.field("resolved", report.resolved)
            w.endObject()
        }
        w.endArray()
        w.endObject()
    }
}
