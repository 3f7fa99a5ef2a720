import CouchetteTestSupport
import Testing

extension ReplicationProtocol: CustomTestStringConvertible {
    public var testDescription: String { name }
}
