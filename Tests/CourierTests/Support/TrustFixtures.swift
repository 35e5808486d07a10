// Public certificates for the trust tests, made once with openssl (their private keys were deleted
// at once): a CA, two leaves it signed for pinned.test with different keys (the second is the
// "rotated" key), and a self-signed RSA certificate. The SPKI digests were printed by
// `openssl x509 -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64`.
enum TrustFixtures {
    static let caPEM = """
        -----BEGIN CERTIFICATE-----
        MIIBkDCCATegAwIBAgIUXOem4zSXu5gbfqxgS7DUebSi9NwwCgYIKoZIzj0EAwIw
        HTEbMBkGA1UEAwwSQ291cmllciBGaXh0dXJlIENBMCAXDTI2MTEyNTIxMjg1OFoY
        DzIxMjYxMTAxMjEyODU4WjAdMRswGQYDVQQDDBJDb3VyaWVyIEZpeHR1cmUgQ0Ew
        WTATBgcqhkjOPQIBBggqhkjOPQMBBwNCAASl3iO4QWe2OaebrmBl1r8hDwdfsoEN
        rEH8maoHbRViO5jE+BtETg5WtOHEuwmT+NmT9GbtR/m1EgQIhhe8k87No1MwUTAd
        BgNVHQ4EFgQUv729U8CLgfMVZUG4xQb7gjzpJ+EwHwYDVR0jBBgwFoAUv729U8CL
        gfMVZUG4xQb7gjzpJ+EwDwYDVR0TAQH/BAUwAwEB/zAKBggqhkjOPQQDAgNHADBE
        AiAjhQJU7T3zBLYAVy06KSd9lBeQKJIDiR05XuyHa/EQ9wIgW7Un7CgU1FnKQf6U
        Aey6dCcLkfcGrcdmobtaAbsb2xw=
        -----END CERTIFICATE-----
        """
    static let caKeySHA256 = "xg2S4ShYs3g/hxatCsvjTwrhb0D5e03p9m2bd6qvlzY="
    static let leafPEM = """
        -----BEGIN CERTIFICATE-----
        MIIBLzCB1gIUHOR+3yQqSq6NKFWgAuwyWXNH/wgwCgYIKoZIzj0EAwIwHTEbMBkG
        A1UEAwwSQ291cmllciBGaXh0dXJlIENBMCAXDTI2MTEyNTIxMjg1OFoYDzIxMjYx
        MTAxMjEyODU4WjAWMRQwEgYDVQQDDAtwaW5uZWQudGVzdDBZMBMGByqGSM49AgEG
        CCqGSM49AwEHA0IABIvDt23KF9a6ZIhB7QpROsl7r9OJhbv+mH5oV+sJkxxzoExl
        tPSbIM2hD5JbwHGlfX/Uu4E4Nu1pDHjC3HUSLhQwCgYIKoZIzj0EAwIDSAAwRQIh
        APw1l+Jjuyc1qZffZD6gpOZQdlpgL9WhQIkWKTPLMAb2AiAEfn7SF1nPFV3KTqoO
        71e8pXYau33AkGN1ePj/gM3mZg==
        -----END CERTIFICATE-----
        """
    static let leafKeySHA256 = "gS0h1mZ7NetTDMWqDc/BXD6djvUFXE5Rl8QYnwg4QrQ="
    static let rotatedPEM = """
        -----BEGIN CERTIFICATE-----
        MIIBLzCB1gIUHOR+3yQqSq6NKFWgAuwyWXNH/wkwCgYIKoZIzj0EAwIwHTEbMBkG
        A1UEAwwSQ291cmllciBGaXh0dXJlIENBMCAXDTI2MTEyNTIxMjg1OFoYDzIxMjYx
        MTAxMjEyODU4WjAWMRQwEgYDVQQDDAtwaW5uZWQudGVzdDBZMBMGByqGSM49AgEG
        CCqGSM49AwEHA0IABPSkrcC0HxxldtaoFuSpGoau6bmKzMzg5jsfhhiJyrzAMY7/
        LaZg4ZVw+TownSB4Mmwnvm91QKD9Ojhx9PCDvSwwCgYIKoZIzj0EAwIDSAAwRQIh
        AIR2ZJKmWK/8CvIhG4ztGAieHwSSkHyBY1OwPd4ivBu9AiBjEQ8hAmeuUrXUUxag
        IXZSZuvIrOTpVgrfIxOpqPk7Zg==
        -----END CERTIFICATE-----
        """
    static let rotatedKeySHA256 = "rkVdhs5eeSqiutsb9qpfBFa4C994KVOlhW0VimiJiCw="
    static let rsaPEM = """
        -----BEGIN CERTIFICATE-----
        MIIDCTCCAfGgAwIBAgIUc/Sk5XjFH0B5EQ1NJ3cXoY2Jj8IwDQYJKoZIhvcNAQEL
        BQAwEzERMA8GA1UEAwwIcnNhLnRlc3QwIBcNMjYxMTI1MjEyODU4WhgPMjEyNjEx
        MDEyMTI4NThaMBMxETAPBgNVBAMMCHJzYS50ZXN0MIIBIjANBgkqhkiG9w0BAQEF
        AAOCAQ8AMIIBCgKCAQEA3UElka6Nvo8tOpGk0GgKl5i0qrnQyjCJb917XZ0hOjYm
        UXs2zSV0ZM/xjf5OOtI9BdBLtlAKzt3OeJWSF9vxAp5Gs86IUmSKqzvvcPRNk+kX
        93HATWVpP8kf5YKLaCbheQkVEmvqOUROvdXEjXCtbV0DqL0bvg+RVoLUK4upvgIh
        BRgyJGwGqFNv9h6jtaaxmiLEWYfr+BcSqTpQTCQ3Ang5LoSWkJ1JyxKYpaibM9yr
        qYYn/ZwGCLzVtp/RxhqqQseHw5662U/Te6z6Zs/2s3wR4vQBgOQzdYi1ZVmE6YXI
        TT4nNeE4IbY0E7cGscZuYsVjnRrj0mQY9PSm2Qf0rQIDAQABo1MwUTAdBgNVHQ4E
        FgQUitEE5mZvpUA+0nGnS0WvoEfdEfIwHwYDVR0jBBgwFoAUitEE5mZvpUA+0nGn
        S0WvoEfdEfIwDwYDVR0TAQH/BAUwAwEB/zANBgkqhkiG9w0BAQsFAAOCAQEAcDru
        RgjdTCxWi+YsUI64zO/7t+RT9Is+um6tu21pvt/dgtGcaAtYTeq+A9/P2MCPdofM
        vM3KAF3kgBX0yoGHTAjSh/QzyNA3YKiefknt9aJOyQUibZaav9/npdp2g/nnDacI
        9P/D55t0Cql7XNMGZuAUYDxXa9eNb6C87I6IkKs2lIBu4cPHZNILDvu0yIzgaWdZ
        QdKUDfVIim5wcvzHBD1Mz/ldD9HsNhIgmKPLqsFCnrc8UVrdm0Iyy+lgbMY4sv/q
        Ai2PFIX1Zy/3C/kerUHCNBVxHTr0CZiJ4M10BKDdzp/zI77BWjBFTq6nsx2gspW0
        G1awfmEJZ4Ugg3voRw==
        -----END CERTIFICATE-----
        """
    static let rsaKeySHA256 = "ohS3FV77CyPGyNG6e3hZfGOO8qBvEmrOm4bU3B6F8Ok="
}
