// The storage ports a hub runs on, named once: one value the composition (CairnApp's `HubStorage`, the test
// harnesses, the benchmarks) fills in, instead of a dozen arguments. The optional ports switch a feature off when
// absent: without `roles` nobody may watch the stats channel, administer or write places; without `admin` the admin
// ops are refused; without `places` there are no places; without `pictures` the picture ops fail.
public import CairnAdmin
public import CairnBuckets
public import CairnChat
public import CairnCore
public import CairnPictures
public import CairnPlaces
public import CairnProfiles
public import CairnRelics
public import CairnSocial
public import CairnTrackers

/// The storage ports a hub's features write through (accounts come with `Accounts`, which hashes as it stores).
public struct HubStores {
    /// Users, friendships, sharing rules and positions.
    public var social: any SocialStore
    /// Relics.
    public var relics: any RelicStore
    /// Chat messages.
    public var chat: any ChatStore
    /// Profiles.
    public var profiles: any ProfileStore
    /// Buckets and items.
    public var buckets: any BucketStore
    /// Trackers and items' positions.
    public var trackers: any TrackerStore
    /// Safe zones.
    public var safeZones: any SafeZoneStore
    /// Who holds which role; nil: nobody holds any.
    public var roles: (any RoleStore)?
    /// What the admin ops read and write; nil: they are refused.
    public var admin: (any AdminStore)?
    /// Places of interest; nil: none.
    public var places: (any PlaceStore)?
    /// Pictures and events; nil: their ops fail.
    public var pictures: (any PictureStore)?

    /// Names each port; the optional ones default to absent.
    public init(
        social: any SocialStore, relics: any RelicStore, chat: any ChatStore, profiles: any ProfileStore,
        buckets: any BucketStore, trackers: any TrackerStore, safeZones: any SafeZoneStore,
        roles: (any RoleStore)? = nil, admin: (any AdminStore)? = nil, places: (any PlaceStore)? = nil,
        pictures: (any PictureStore)? = nil
    ) {
        self.social = social
        self.relics = relics
        self.chat = chat
        self.profiles = profiles
        self.buckets = buckets
        self.trackers = trackers
        self.safeZones = safeZones
        self.roles = roles
        self.admin = admin
        self.places = places
        self.pictures = pictures
    }

    /// Every port, optional ones included, from one store that implements them all (the SQL stores).
    public init(
        all store: some SocialStore & RelicStore & ChatStore & ProfileStore & BucketStore & TrackerStore
            & SafeZoneStore & RoleStore & AdminStore & PlaceStore & PictureStore
    ) {
        self.init(
            social: store, relics: store, chat: store, profiles: store, buckets: store, trackers: store,
            safeZones: store, roles: store, admin: store, places: store, pictures: store)
    }
}
