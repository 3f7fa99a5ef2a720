// MARK: - ChangesFilter

/// The `filter` of a `_changes` request (spec: gateway-rest-api.md §11.1).
public enum ChangesFilter: Sendable, Hashable {
    /// No filter: every change the caller can see.
    case none
    /// `sync_gateway/bychannel`: changes in these channels (intersected with those the caller can see).
    /// `*` stands for every channel.
    case channels(Set<String>)
    /// `_doc_ids`: changes of these documents only (any feed).
    case documentIDs([String])

    /// The filter name for `sync_gateway/bychannel`.
    public static let byChannelName = "sync_gateway/bychannel"

    /// The filter name for `_doc_ids`.
    public static let documentIDsName = "_doc_ids"
}
