import Couchette

extension TodoStore {
    /// The tutorial's shake gesture on the lists screen (`saveAllowingConflict`): two children of a list's current
    /// revision, both saved, so that the list has a conflict. One of them renames the list "Text Changed".
    func makeListConflict(id: String) throws {
        try makeConflict(id) { first, second in
            first["name"] = "Text Changed"
            second["name"] = ((second["name"] as? String) ?? "") + " (other device)"
        }
    }

    /// The tutorial's shake gesture on the tasks screen: one branch changes the task's text, the other completes
    /// it; an n-way merge keeps both changes.
    func makeTaskConflict(id: String) throws {
        try makeConflict(id) { first, second in
            first["task"] = ((first["task"] as? String) ?? "") + " (edited)"
            second["complete"] = true
        }
    }

    private func makeConflict(_ id: String, _ edit: (UnsavedRevision, UnsavedRevision) -> Void) throws {
        guard let current = try database.defaultCollection().currentRevision(documentID: id), !current.isDeletion else {
            throw TodoError.notFound("document \(id)")
        }
        let first = current.createRevision()
        let second = current.createRevision()
        edit(first, second)
        _ = try first.saveAllowingConflict()
        _ = try second.saveAllowingConflict()
    }
}
