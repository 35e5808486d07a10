// A target that forgets its headers is told so.
// expect-error: protocol requires property 'headers' with type '[String : String]'
import Courier
import Foundation

struct NoHeaders: TargetType {
    var baseURL: URL { URL(string: "https://api.example.com")! }
    var path: String { "user" }
}
