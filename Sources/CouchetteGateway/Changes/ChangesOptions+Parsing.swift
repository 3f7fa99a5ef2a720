import CouchetteCore
import Foundation

// MARK: - Parsing

extension ChangesOptions {
    /// Parses request parameters, as strings (query values; see ``parameters(fromBody:)`` for POST bodies).
    ///
    /// ```swift
    /// let options = try ChangesOptions(parameters: [
    ///     "filter": "sync_gateway/bychannel", "channels": "a,b", "style": "all_docs",
    /// ])
    /// options.filter  // .channels(["a", "b"])
    /// ```
    ///
    /// - Parameters:
    ///   - parameters: Parameter values by name.
    ///   - limits: The heartbeat floor and cap.
    ///   - currentSequence: What `since=now` means: the database's latest committed sequence.
    /// - Throws: 400 "Unknown feed type", "Invalid sequence", "Missing 'channels' filter parameter",
    ///   "Empty channel list", "descending=true needs feed=normal", "Unknown filter; try sync_gateway/bychannel or
    ///   _doc_ids", or naming a malformed number or Boolean.
    public init(parameters: [String: String], limits: Limits = Limits(), currentSequence: UInt64 = 0)
        throws(GatewayError)
    {
        self.init()
        let feedText = parameters["feed"] ?? ""
        if feedText.isEmpty {
            feed = .normal
        } else {
            guard let feed = ChangesFeedType(rawValue: feedText) else { throw .badRequest("Unknown feed type") }
            self.feed = feed
        }
        let sinceText = parameters["since"] ?? ""
        since = sinceText == "now" ? ChangeSequence(currentSequence) : try ChangeSequence.parse(sinceText)
        limit = try Self.integer(parameters, "limit").flatMap { $0 == 0 ? nil : $0 }
        let query = QueryOptions(parameters)
        includeAllLeaves = try query.oneOf("style", ["main_only", "all_docs"]) == "all_docs"
        _ = try query.oneOf("version_type", ["rev"])  // revision IDs are the only versions kept (not SG 3.2's `cv`)
        includeDocs = try Self.boolean(parameters, "include_docs")
        includeConflicts = try Self.boolean(parameters, "conflicts")
        includeAttachments = try Self.boolean(parameters, "attachments")
        activeOnly = try Self.boolean(parameters, "active_only")
        revocations = try Self.boolean(parameters, "revocations")
        descending = try Self.boolean(parameters, "descending")
        if descending, feed != .normal { throw .badRequest("descending=true needs feed=normal") }
        sequenceInterval = try Self.integer(parameters, "seq_interval").flatMap { $0 == 0 ? nil : $0 }
        filter = try Self.filter(parameters)
        heartbeat = try Self.integer(parameters, "heartbeat").flatMap { milliseconds in
            guard milliseconds > 0 else { return nil }
            var heartbeat = max(Duration.milliseconds(milliseconds), limits.minimumHeartbeat)
            if let maximum = limits.maximumHeartbeat, maximum > .zero { heartbeat = min(heartbeat, maximum) }
            return heartbeat
        }
        if heartbeat != nil {
            timeout = nil
        } else if let milliseconds = try Self.integer(parameters, "timeout") {
            timeout = milliseconds == 0 ? nil : min(.milliseconds(milliseconds), Self.maximumTimeout)
        }
        gzip = parameters["accept_encoding"]?.lowercased() == "gzip"
    }

    /// The string form of a POST body's (or WebSocket message's) keys, to merge under the query.
    ///
    /// Strings stay as they are; numbers and Booleans become their JSON text; `channels` given as an array is
    /// joined with commas; `doc_ids` (and any other array or object) becomes its JSON text. `null` is ignored.
    public static func parameters(fromBody body: [String: JSONValue]) -> [String: String] {
        var parameters: [String: String] = [:]
        for (name, value) in body {
            switch value {
            case .null:
                continue
            case .string(let string):
                parameters[name] = string
            case .array(let items) where name == "channels" && items.allSatisfy({ $0.stringValue != nil }):
                parameters[name] = items.compactMap(\.stringValue).joined(separator: ",")
            default:
                parameters[name] = value.serializedString()
            }
        }
        return parameters
    }

    // MARK: - Values

    private static func integer(_ parameters: [String: String], _ name: String) throws(GatewayError) -> Int? {
        guard let text = parameters[name], !text.isEmpty else { return nil }
        guard let value = Int(text), value >= 0 else { throw .badRequest("Invalid \(name)") }
        return value
    }

    private static func boolean(_ parameters: [String: String], _ name: String) throws(GatewayError) -> Bool {
        guard let text = parameters[name] else { return false }
        switch text.lowercased() {
        case "true", "1": return true
        case "false", "0", "": return false
        default: throw .badRequest("Invalid value for \(name): expected true or false")
        }
    }

    private static func filter(_ parameters: [String: String]) throws(GatewayError) -> ChangesFilter {
        guard let name = parameters["filter"], !name.isEmpty else { return .none }
        switch name {
        case ChangesFilter.byChannelName:
            guard let list = parameters["channels"] else {
                throw .badRequest("Missing 'channels' filter parameter")
            }
            let channels = Set(Self.list(list))
            guard !channels.isEmpty else { throw .badRequest("Empty channel list") }
            return .channels(channels)
        case ChangesFilter.documentIDsName:
            guard let list = parameters["doc_ids"] else { throw .badRequest("Missing 'doc_ids' filter parameter") }
            return .documentIDs(try documentIDs(list))
        default:
            throw .badRequest("Unknown filter; try sync_gateway/bychannel or _doc_ids")
        }
    }

    /// `doc_ids` as a JSON array of strings, or a comma-separated list.
    private static func documentIDs(_ text: String) throws(GatewayError) -> [String] {
        if text.trimmingCharacters(in: .whitespaces).hasPrefix("[") {
            guard case .array(let items)? = try? JSONValue(parsing: text),
                items.allSatisfy({ $0.stringValue != nil })
            else { throw .badRequest("Invalid doc_ids: expected a JSON array of strings") }
            return items.compactMap(\.stringValue)
        }
        return list(text)
    }

    /// The non-empty items of a comma-separated list, trimmed.
    private static func list(_ text: String) -> [String] {
        text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }
}
