import Courier
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The `HTTPURLResponse` objects that `readers` tasks, started together, get from one response's
/// lazily built `response`: a head built once has exactly one (the same object for every reader).
func headObjectsSeenByRacingReaders(of response: Response, readers: Int = 8) async -> Set<ObjectIdentifier?> {
    await withTaskGroup(of: ObjectIdentifier?.self) { group in
        for _ in 0..<readers { group.addTask { response.response.map(ObjectIdentifier.init) } }
        var ids: Set<ObjectIdentifier?> = []
        for await id in group { ids.insert(id) }
        return ids
    }
}
