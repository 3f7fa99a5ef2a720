import CouchetteCore

// MARK: - PrincipalBody

/// Field readers shared by ``UserUpdate`` and ``RoleUpdate``: each type error is a 400 naming the field.
enum PrincipalBody {
    /// The body as an object, or 400.
    static func object(_ body: JSONValue) throws(GatewayError) -> [String: JSONValue] {
        guard let object = body.objectValue else { throw .badRequest("Request body must be a JSON object") }
        return object
    }

    /// Parses JSON text, or 400 "Bad JSON".
    static func parse(_ bytes: some Collection<UInt8>) throws(GatewayError) -> JSONValue {
        do {
            return try JSONValue(parsing: bytes)
        } catch {
            throw .badRequest("Bad JSON")
        }
    }

    /// A 400 about `field`, e.g. `"disabled" must be a boolean`.
    static func typeError(_ field: String, _ expected: String) -> GatewayError {
        var error = GatewayError.badRequest("\"\(field)\" must be \(expected)")
        error.field = field
        return error
    }

    /// An optional string; `null` counts as absent.
    static func string(_ object: [String: JSONValue], _ field: String) throws(GatewayError) -> String? {
        guard let value = object[field], !value.isNull else { return nil }
        guard let string = value.stringValue else { throw typeError(field, "a string") }
        return string
    }

    /// An optional boolean; `null` counts as absent.
    static func bool(_ object: [String: JSONValue], _ field: String) throws(GatewayError) -> Bool? {
        guard let value = object[field], !value.isNull else { return nil }
        guard let bool = value.boolValue else { throw typeError(field, "a boolean") }
        return bool
    }

    /// An array of strings; absent or `null` is empty.
    static func strings(_ object: [String: JSONValue], _ field: String) throws(GatewayError) -> Set<String> {
        guard let value = object[field], !value.isNull else { return [] }
        guard let array = value.arrayValue else { throw typeError(field, "an array of strings") }
        var strings: Set<String> = []
        for element in array {
            guard let string = element.stringValue else { throw typeError(field, "an array of strings") }
            strings.insert(string)
        }
        return strings
    }

    /// `admin_channels`, each non-empty and comma-free (400 "Illegal channel name").
    static func channels(_ object: [String: JSONValue], _ field: String) throws(GatewayError) -> Set<String> {
        let channels = try strings(object, field)
        guard channels.allSatisfy(PrincipalName.isValidChannel) else {
            var error = GatewayError.badRequest("Illegal channel name")
            error.field = field
            throw error
        }
        return channels
    }

    /// The principal name: the URL's when given (the body's must then match), else the body's (400 when missing).
    static func name(_ object: [String: JSONValue], urlName: String?) throws(GatewayError) -> String {
        let bodyName = try string(object, "name")
        let name: String
        switch (urlName, bodyName) {
        case (let url?, let body?) where url != body:
            throw .badRequest("Name mismatch (can't change name)")
        case (let url?, _):
            name = url
        case (nil, let body?) where !body.isEmpty:
            name = body
        case (nil, _):
            throw .badRequest("Missing name property")
        }
        guard !name.isEmpty, name == PrincipalName.guest || PrincipalName.isValid(name) else {
            throw .badRequest("Invalid name")
        }
        return name
    }
}
