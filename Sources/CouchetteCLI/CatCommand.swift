import ArgumentParser
import Couchette
import CouchetteCore
import Foundation

// MARK: - CatCommand

/// `couchette cat DB ID...` (alias `get`): documents' bodies as JSON, indented unless `--json`.
struct CatCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cat", abstract: "Print documents as JSON.", aliases: ["get"])

    @OptionGroup var options: DatabaseOptions

    @Option(help: "A revision instead of the current one (one document only).")
    var rev: String?

    @Flag(help: "Include the revision metadata: _id, _rev, _sequence, _deleted, _conflicts.")
    var raw = false

    @Flag(help: "Print in readable JSON5 style: sorted keys, unquoted where they are identifiers.")
    var json5 = false

    @Argument(help: "The document IDs (after -- when one starts with -).")
    var ids: [String]

    func run() throws {
        try reportingErrors {
            guard !ids.isEmpty else { throw CLIError.usage("Give at least one document ID.") }
            if rev != nil && ids.count > 1 { throw CLIError.usage("--rev reads one document.") }
            let database = try options.open()
            defer { try? database.close() }
            let collection = try options.collection(in: database)
            var missing: [String] = []
            var output = ""
            for id in ids {
                guard let value = try body(of: id, in: collection) else {
                    missing.append(id)
                    continue
                }
                let text =
                    json5 ? JSON5Text.render(value) : options.json ? value.serializedString() : value.serializedString(prettyPrinted: true)
                output += text + "\n"
            }
            FileHandleOutput.standardOutput(output)
            if !missing.isEmpty { throw CLIError.notFound("Not found: \(missing.joined(separator: ", "))") }
        }
    }

    private func body(of id: String, in collection: Collection) throws -> JSONValue? {
        let revision: SavedRevision?
        if let rev {
            revision = try collection.revision(documentID: id, revisionID: rev)
        } else {
            revision = try collection.currentRevision(documentID: id)
        }
        guard let revision else { return nil }
        if revision.isDeletion && rev == nil && !raw { return nil }
        var members = (revision.toDocument()?.toJSONValue().objectValue) ?? [:]
        if raw {
            members["_id"] = .string(id)
            members["_rev"] = .string(revision.revisionID ?? "")
            members["_sequence"] = .int(Int64(revision.sequence))
            if revision.isDeletion { members["_deleted"] = true }
            let conflicts = try collection.conflictingRevisions(documentID: id).compactMap(\.revisionID)
                .filter { $0 != revision.revisionID }
            if !conflicts.isEmpty { members["_conflicts"] = .array(conflicts.map(JSONValue.string)) }
        }
        return .object(members)
    }
}

// MARK: - RevsCommand

/// `couchette revs DB ID`: the revision tree drawn in text (or Graphviz with `--dot`), with flags for the current
/// revision, leaves, deletions, conflicts and attachments.
struct RevsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "revs", abstract: "Draw a document's revision tree.")

    @OptionGroup var options: DatabaseOptions

    @Flag(help: "Write Graphviz (dot) instead of text.")
    var dot = false

    @Argument(help: "The document ID.")
    var id: String

    func run() throws {
        try reportingErrors {
            let database = try options.open()
            defer { try? database.close() }
            let collection = try options.collection(in: database)
            guard let tree = try collection.revisionTree(documentID: id) else { throw CLIError.notFound("Not found: \(id)") }
            var withAttachments = Set<String>()
            for node in tree.nodes where node.hasBody {
                if try collection.revision(documentID: id, revisionID: node.revisionID)?.properties?["_attachments"] != nil {
                    withAttachments.insert(node.revisionID)
                }
            }
            let flags = { (node: Couchette.RevisionTree.Node) in Self.flags(node, in: tree, attachments: withAttachments) }
            FileHandleOutput.standardOutput(dot ? Self.graphviz(tree, flags: flags) : Self.text(tree, flags: flags))
        }
    }

    /// The flags of a node: current, leaf, deleted, conflict, attachments.
    static func flags(_ node: Couchette.RevisionTree.Node, in tree: Couchette.RevisionTree, attachments: Set<String>) -> [String] {
        let isWinner = tree.winningRevisionID == node.revisionID
        var flags: [String] = []
        if isWinner { flags.append("current") }
        if node.isLeaf { flags.append("leaf") }
        if node.isDeletion { flags.append("deleted") }
        if node.isLeaf && !isWinner && !node.isDeletion { flags.append("conflict") }
        if attachments.contains(node.revisionID) { flags.append("attachments") }
        return flags
    }

    /// The tree from its roots, children under their parent:
    ///
    /// ```text
    /// 1-abc
    /// ├─ 2-def  [current, leaf]
    /// └─ 2-ff0  [leaf, conflict]
    /// ```
    static func text(_ tree: Couchette.RevisionTree, flags: (Couchette.RevisionTree.Node) -> [String]) -> String {
        let known = Set(tree.nodes.map(\.revisionID))
        var children: [String: [Couchette.RevisionTree.Node]] = [:]
        var roots: [Couchette.RevisionTree.Node] = []
        for node in tree.nodes {
            if let parent = node.parentRevisionID, known.contains(parent) {
                children[parent, default: []].append(node)
            } else {
                roots.append(node)
            }
        }
        var output = ""
        func draw(_ node: Couchette.RevisionTree.Node, prefix: String, branch: String, last: Bool) {
            let marks = flags(node)
            output += prefix + branch + node.revisionID + (marks.isEmpty ? "" : "  [" + marks.joined(separator: ", ") + "]") + "\n"
            let below = (children[node.revisionID] ?? []).sorted { $0.revisionID < $1.revisionID }
            let childPrefix = branch.isEmpty ? prefix : prefix + (last ? "   " : "│  ")
            for (index, child) in below.enumerated() {
                let isLast = index == below.count - 1
                draw(child, prefix: childPrefix, branch: isLast ? "└─ " : "├─ ", last: isLast)
            }
        }
        for root in roots { draw(root, prefix: "", branch: "", last: true) }
        return output
    }

    /// The tree in Graphviz's dot language.
    static func graphviz(_ tree: Couchette.RevisionTree, flags: (Couchette.RevisionTree.Node) -> [String]) -> String {
        var output = "digraph \"\(tree.documentID.replacingOccurrences(of: "\"", with: "\\\""))\" {\n  rankdir=LR;\n"
        for node in tree.nodes {
            let marks = flags(node)
            let style = marks.contains("current") ? ", style=bold" : marks.contains("deleted") ? ", style=dashed" : ""
            output += "  \"\(node.revisionID)\" [label=\"\(node.revisionID)\\n\(marks.joined(separator: " "))\"\(style)];\n"
            if let parent = node.parentRevisionID { output += "  \"\(parent)\" -> \"\(node.revisionID)\";\n" }
        }
        return output + "}\n"
    }
}
