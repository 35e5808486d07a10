import Foundation

/// A binary min-heap of deadlines that can remove any entry by its id in O(log n).
struct DeadlineHeap<Instant: Comparable & Sendable>: Sendable {
    private var items: [(id: UInt64, instant: Instant)] = []
    private var positions: [UInt64: Int] = [:]

    var min: (UInt64, Instant)? { items.first.map { ($0.id, $0.instant) } }
    var count: Int { items.count }

    mutating func insert(id: UInt64, at instant: Instant) {
        items.append((id, instant))
        positions[id] = items.count - 1
        siftUp(items.count - 1)
    }

    mutating func remove(id: UInt64) {
        guard let index = positions.removeValue(forKey: id) else { return }
        let last = items.count - 1
        if index != last {
            items.swapAt(index, last)
            positions[items[index].id] = index
        }
        items.removeLast()
        guard index < items.count else { return }
        siftDown(index)
        siftUp(index)
    }

    private mutating func siftUp(_ start: Int) {
        var child = start
        while child > 0 {
            let parent = (child - 1) / 2
            guard items[child].instant < items[parent].instant else { return }
            swap(child, parent)
            child = parent
        }
    }

    private mutating func siftDown(_ start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < items.count, items[left].instant < items[smallest].instant { smallest = left }
            if right < items.count, items[right].instant < items[smallest].instant { smallest = right }
            guard smallest != parent else { return }
            swap(parent, smallest)
            parent = smallest
        }
    }

    private mutating func swap(_ a: Int, _ b: Int) {
        items.swapAt(a, b)
        positions[items[a].id] = a
        positions[items[b].id] = b
    }
}
