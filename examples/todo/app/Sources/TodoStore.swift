import Couchette
import Foundation

/// The Todo app's data, as the tutorial models it (seed 002, "Data Modeling"): `task-list` documents with
/// `{owner}.{uuid}` IDs, `task` documents pointing at their list, `task-list.user` documents sharing a list,
/// `moderator` documents. Reads go through the tutorial's map/reduce views.
final class TodoStore: @unchecked Sendable {
    let database: Database
    /// The logged-in user: owner of new lists.
    let username: String
    private let collection: Collection

    init(database: Database, username: String) throws {
        self.database = database
        self.username = username
        collection = try database.defaultCollection()
        try defineViews()
    }

    // MARK: - Views

    private func defineViews() throws {
        // "Query Documents": lists by name (the owner as the value, to show other users' lists as theirs).
        _ = collection.view(named: "list/listsByName").setMapBlock({ doc, emit in
            if doc["type"] as? String == "task-list", let name = doc["name"] as? String {
                emit(name, doc["owner"])
            }
        }, version: "1.0")
        // "Aggregating Data": incomplete tasks counted per list (groupLevel 1).
        _ = collection.view(named: "list/incompleteTasksCount").setMapBlock({ doc, emit in
            if doc["type"] as? String == "task", let list = doc["taskList"] as? [String: Any],
                let listID = list["id"] as? String, doc["complete"] as? Bool == false
            {
                emit(listID, nil)
            }
        }, reduce: { _, values, _ in values.count }, version: "1.0")
        // A list's tasks in creation order.
        _ = collection.view(named: "task/tasksByCreatedAt").setMapBlock({ doc, emit in
            if doc["type"] as? String == "task", let list = doc["taskList"] as? [String: Any],
                let listID = list["id"] as? String
            {
                emit([listID, doc["createdAt"] as? String ?? ""], nil)
            }
        }, version: "1.0")
        // The users a list is shared with.
        _ = collection.view(named: "list/usersByList").setMapBlock({ doc, emit in
            if doc["type"] as? String == "task-list.user", let list = doc["taskList"] as? [String: Any],
                let listID = list["id"] as? String, let user = doc["username"] as? String
            {
                emit(listID, user)
            }
        }, version: "1.0")
    }

    /// The lists, live (re-run after every commit, local or replicated).
    func listsQuery() -> LiveQuery {
        collection.view(named: "list/listsByName").createQuery().asLive()
    }

    /// The incomplete-task counts per list, live.
    func incompleteCountsQuery() -> LiveQuery {
        let live = collection.view(named: "list/incompleteTasksCount").createQuery().asLive()
        live.groupLevel = 1
        return live
    }

    /// The tasks of `listID`, live.
    func tasksQuery(listID: String) -> LiveQuery {
        var query = collection.view(named: "task/tasksByCreatedAt").createQuery()
        query.startKey = [listID]
        query.endKey = [listID, [String: Any]()]
        query.includeDocs = true
        return query.asLive()
    }

    /// The users `listID` is shared with, live.
    func usersQuery(listID: String) -> LiveQuery {
        var query = collection.view(named: "list/usersByList").createQuery()
        query.keys = [listID]
        return query.asLive()
    }

    /// Documents with conflicts, live ("Detecting conflicts": all documents, `onlyConflicts`).
    func conflictsQuery() -> LiveQuery {
        var query = collection.createAllDocumentsQuery()
        query.allDocsMode = .onlyConflicts
        return query.asLive()
    }

    // MARK: - Reading query rows

    /// The lists in `rows` (of ``listsQuery()``) with their counts from `counts` (of ``incompleteCountsQuery()``).
    static func lists(_ rows: QueryEnumerator?, counts: QueryEnumerator?) -> [TaskList] {
        var incomplete: [String: Int] = [:]
        for row in Self.all(counts) {
            if let id = row.key as? String { incomplete[id] = (row.value as? Int) ?? Int("\(row.value ?? 0)") ?? 0 }
        }
        return Self.all(rows).compactMap { row in
            guard let id = row.documentID else { return nil }
            return TaskList(
                id: id, name: row.key as? String ?? "", owner: row.value as? String ?? "",
                incompleteCount: incomplete[id] ?? 0)
        }
    }

    /// The tasks in `rows` (of ``tasksQuery(listID:)``).
    static func tasks(_ rows: QueryEnumerator?) -> [TodoTask] {
        Self.all(rows).compactMap { row in
            guard let id = row.documentID, let doc = row.documentProperties else { return nil }
            let attachments = doc["_attachments"] as? [String: Any]
            return TodoTask(
                id: id, task: doc["task"] as? String ?? "", complete: doc["complete"] as? Bool ?? false,
                createdAt: doc["createdAt"] as? String ?? "", hasImage: attachments?["image"] != nil)
        }
    }

    /// The user names in `rows` (of ``usersQuery(listID:)``).
    static func users(_ rows: QueryEnumerator?) -> [String] {
        Self.all(rows).compactMap { $0.value as? String }.sorted()
    }

    private static func all(_ rows: QueryEnumerator?) -> [QueryRow] {
        rows.map { Array($0) } ?? []
    }

    // MARK: - Lists

    /// "Create a Document": a new list owned by the user, its ID `{username}.{uuid}`.
    @discardableResult
    func createList(name: String) throws -> String {
        let id = username + "." + UUID().uuidString
        _ = try collection.putProperties(["type": "task-list", "name": name, "owner": username], documentID: id)
        return id
    }

    /// "Update Document": renames a list.
    func renameList(id: String, to name: String) throws {
        try update(id) { $0["name"] = name }
    }

    /// "Delete Document": deletes a list (a tombstone revision, replicated like any other).
    func deleteList(id: String) throws {
        try delete(id)
    }

    /// Shares `list` with `user`: a `task-list.user` document (ID `{list}.{user}`), which the sync function turns
    /// into the user's access to the list's channel.
    func share(_ list: TaskList, with user: String) throws {
        _ = try collection.putProperties(
            ["type": "task-list.user", "taskList": ["id": list.id, "owner": list.owner], "username": user],
            documentID: list.id + "." + user)
    }

    /// Stops sharing `list` with `user`.
    func unshare(_ list: TaskList, with user: String) throws {
        try delete(list.id + "." + user)
    }

    /// Makes `user` a moderator: a `moderator` document (only an admin's is accepted by the gateway).
    func makeModerator(_ user: String) throws {
        _ = try collection.putProperties(["type": "moderator", "username": user], documentID: "moderator." + user)
    }

    // MARK: - Tasks

    /// A new incomplete task in `list`, dated now.
    @discardableResult
    func createTask(_ text: String, in list: TaskList) throws -> String {
        let id = UUID().uuidString
        _ = try collection.putProperties(
            [
                "type": "task", "task": text, "complete": false, "createdAt": Self.now(),
                "taskList": ["id": list.id, "owner": list.owner],
            ], documentID: id)
        return id
    }

    func editTask(id: String, text: String) throws {
        try update(id) { $0["task"] = text }
    }

    func setComplete(id: String, _ complete: Bool) throws {
        try update(id) { $0["complete"] = complete }
    }

    func deleteTask(id: String) throws {
        try delete(id)
    }

    /// Attaches the image at `path` to a task as its `image` attachment (JPEG or PNG by the file's extension).
    func attachImage(taskID: String, path: String) throws {
        let url = URL(fileURLWithPath: (path as NSString).expandingTildeInPath)
        guard FileManager.default.isReadableFile(atPath: url.path) else { throw TodoError.notFound("file \(path)") }
        let type = url.pathExtension.lowercased() == "png" ? "image/png" : "image/jpeg"
        try update(taskID) { revision in try revision.setAttachment(named: "image", contentType: type, contentURL: url) }
    }

    /// The image of a task, if it has one.
    func image(taskID: String) throws -> Blob? {
        try collection.currentRevision(documentID: taskID)?.attachment(named: "image")
    }

    // MARK: - Helpers

    /// Edits the current revision of `id`, again on a conflict (a replicator may have saved a newer one).
    private func update(_ id: String, _ edit: (UnsavedRevision) throws -> Void) throws {
        for attempt in 1... {
            guard let current = try collection.currentRevision(documentID: id), !current.isDeletion else {
                throw TodoError.notFound("document \(id)")
            }
            let revision = current.createRevision()
            try edit(revision)
            do {
                _ = try revision.save()
                return
            } catch let error as CouchetteError where error.code == .conflict && attempt < 5 {
                continue
            }
        }
    }

    private func delete(_ id: String) throws {
        guard let current = try collection.currentRevision(documentID: id), !current.isDeletion else {
            throw TodoError.notFound("document \(id)")
        }
        _ = try current.deleteDocument()
    }

    /// Now in ISO-8601 ("Storing Dates"), with milliseconds so that tasks made in one second keep their order.
    static func now() -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: Date())
    }
}
