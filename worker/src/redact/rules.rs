//! The rule table: one entry per credential shape, in priority order.
//!
//! Every rule names the literal anchors one of which occurs in each of its
//! matches (a provider prefix, a key word, `://`). The prefilter finds all
//! anchors of all rules in one scan; a rule runs only at its own anchors'
//! hits, on a window around the hit.
//!
//! Token patterns use these shorthands, expanded before compiling: `{B}` an
//! ASCII word boundary; `{E}` the end of a token (an ASCII boundary, or a
//! following non-ASCII character); `{S}` / `{NS}` whitespace as Python counts
//! it (U+001C to U+001F included) and its complement. The secret is the group
//! named `s`, or the whole match.
//!
//! Shapes come from the providers' published token formats: a fixed prefix
//! (`ghp_`, `xoxb-`, `glpat-`, `dop_v1_`), a fixed structure (SendGrid's two
//! dotted parts, Postman's `PMAK-` with two hex parts) and a length range.

/// How a rule is matched once one of its anchors is found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A regex over a window around the anchor.
    Token,
    /// `Authorization: <scheme> <token>`: a regex anchored at the name, whose
    /// token runs to the next whitespace (on the next line when the scheme
    /// ends its line).
    Header,
    /// A secret-named key and its value, in any assignment syntax (code).
    Assignment,
    /// The password of `scheme://user:password@host` (code).
    Url,
    /// A private-key armor block, `BEGIN` to `END` (code).
    KeyBlock,
    /// The private lines of a PuTTY key file (code).
    Putty,
}

/// One rule.
#[derive(Debug)]
pub(crate) struct Rule {
    /// The name in `[redacted:<name>]` and in the report, kebab-case.
    pub(crate) name: &'static str,
    pub(crate) kind: Kind,
    /// Literals one of which every match contains.
    pub(crate) anchors: &'static [&'static str],
    /// Anchors compare case-insensitively (key words) rather than exactly
    /// (provider prefixes).
    pub(crate) any_case: bool,
    /// How many bytes before the anchor a match may start.
    pub(crate) back: usize,
    /// How many bytes after the anchor a match may end.
    pub(crate) ahead: usize,
    /// The match starts at the anchor, after a non-word byte: a hit glued to
    /// a word character is skipped without running the regex.
    pub(crate) bounded: bool,
    /// Token and header rules: the pattern.
    pub(crate) pattern: &'static str,
}

/// A token rule starting at its anchor.
const fn token(
    name: &'static str,
    anchors: &'static [&'static str],
    pattern: &'static str,
) -> Rule {
    Rule {
        name,
        kind: Kind::Token,
        anchors,
        any_case: false,
        back: 0,
        ahead: 1024,
        bounded: true,
        pattern,
    }
}

/// A token rule whose match may start up to `back` bytes before the anchor.
const fn token_back(
    name: &'static str,
    anchors: &'static [&'static str],
    back: usize,
    pattern: &'static str,
) -> Rule {
    Rule {
        name,
        kind: Kind::Token,
        anchors,
        any_case: false,
        back,
        ahead: 1024,
        bounded: false,
        pattern,
    }
}

/// A rule matched in code.
const fn coded(
    name: &'static str,
    kind: Kind,
    anchors: &'static [&'static str],
    any_case: bool,
) -> Rule {
    Rule {
        name,
        kind,
        anchors,
        any_case,
        back: 0,
        ahead: 0,
        bounded: false,
        pattern: "",
    }
}

/// The most rules the table may hold (the report's bit set and the lazily
/// compiled regexes are sized by it).
pub(crate) const MAX_RULES: usize = 4 * 64;

/// The name of the `Authorization` header rule.
pub(crate) const HEADER_NAME: &str = "basic-auth-header";

/// Every rule, in priority order: where two rules' secrets overlap, the
/// replacement covers both and is named after the one that starts first, or
/// the earlier rule when they start together.
pub(crate) static RULES: &[Rule] = &[
    token(
        "aws-access-key-id",
        &[
            "AKIA", "ASIA", "AGPA", "AIDA", "AROA", "ANPA", "ABIA", "ACCA", "AIPA", "ANVA", "APKA",
            "A3T",
        ],
        r"{B}(?P<s>(?:A3T[A-Z0-9]|AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ABIA|ACCA|AIPA|ANVA|APKA)[0-9A-Z]{16}){B}",
    ),
    token(
        "github-token",
        &["ghp_", "gho_", "ghu_", "ghs_", "ghr_"],
        r"{B}(?P<s>gh[pousr]_[A-Za-z0-9]{36,255}){B}",
    ),
    token(
        "github-fine-grained-token",
        &["github_pat_"],
        r"{B}(?P<s>github_pat_[A-Za-z0-9_]{60,}){B}",
    ),
    token(
        "gitlab-token",
        &[
            "glpat-",
            "gldt-",
            "glptt-",
            "glrt-",
            "glcbt-",
            "glimt-",
            "glft-",
            "glagent-",
            "gloas-",
            "glsoat-",
            "glffct-",
            "glwt-",
            "GR1348941",
        ],
        r"{B}(?P<s>(?:(?:glpat|gldt|glptt|glrt|glcbt|glimt|glft|glagent|gloas|glsoat|glffct|glwt)-|GR1348941)[A-Za-z0-9_-]{20,}){E}",
    ),
    token(
        "slack-token",
        &["xox", "xapp-"],
        r"{B}(?P<s>(?:xox[abposre](?:\.xox[bp])?|xapp)-[A-Za-z0-9-]{10,}){E}",
    ),
    token(
        "stripe-key",
        &[
            "sk_live_", "sk_test_", "sk_prod_", "rk_live_", "rk_test_", "rk_prod_",
        ],
        r"{B}(?P<s>(?:sk|rk)_(?:live|test|prod)_[A-Za-z0-9]{16,}){B}",
    ),
    token(
        "anthropic-key",
        &["sk-ant-"],
        r"{B}(?P<s>sk-ant-[A-Za-z0-9_-]{20,}){E}",
    ),
    token(
        "openai-key",
        &["sk-"],
        r"{B}(?P<s>sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}){E}",
    ),
    token(
        "google-api-key",
        &["AIza"],
        r"{B}(?P<s>AIza[0-9A-Za-z_-]{35}){E}",
    ),
    token("npm-token", &["npm_"], r"{B}(?P<s>npm_[A-Za-z0-9]{36}){B}"),
    token(
        "hugging-face-token",
        &["hf_", "api_org_"],
        r"{B}(?P<s>hf_[A-Za-z0-9]{34,}|api_org_[A-Za-z0-9]{34}){B}",
    ),
    // Provider tokens with a recognisable prefix, alphabetically by provider.
    token(
        "adobe-client-secret",
        &["p8e-"],
        r"{B}(?P<s>p8e-[A-Za-z0-9]{32}){B}",
    ),
    token(
        "age-secret-key",
        &["AGE-SECRET-KEY-1"],
        r"{B}(?P<s>AGE-SECRET-KEY-1[0-9A-Z]{58}){B}",
    ),
    token(
        "airtable-token",
        &["pat"],
        r"{B}(?P<s>pat[A-Za-z0-9]{14}\.[a-f0-9]{64}){B}",
    ),
    token(
        "alibaba-access-key-id",
        &["LTAI"],
        r"{B}(?P<s>LTAI[A-Za-z0-9]{17,21}){B}",
    ),
    token(
        "artifactory-token",
        &["AKCp", "cmVmdGtu"],
        r"{B}(?P<s>AKCp[A-Za-z0-9]{69}|cmVmdGtu[A-Za-z0-9]{55}){B}",
    ),
    token(
        "atlassian-api-token",
        &["ATATT3", "ATCTT3"],
        r"{B}(?P<s>AT[AC]TT3[A-Za-z0-9_=-]{100,}){E}",
    ),
    token(
        "aws-bedrock-key",
        &["ABSK"],
        r"{B}(?P<s>ABSK[A-Za-z0-9+/]{100,}={0,2})",
    ),
    token_back(
        "azure-ad-client-secret",
        &["Q~"],
        5,
        r"(?:^|[^A-Za-z0-9_~.-])(?P<s>[A-Za-z0-9_~.]{3}[0-9]Q~[A-Za-z0-9_~.-]{31,34})(?:$|[^A-Za-z0-9_~.-])",
    ),
    token_back(
        "azure-sas-signature",
        &["sig="],
        1,
        r"[?&;](?:sig)=(?P<s>[A-Za-z0-9%+/]{30,}(?:%3D|=){0,2})",
    ),
    token(
        "clojars-token",
        &["CLOJARS_"],
        r"{B}(?P<s>CLOJARS_[a-z0-9]{60}){B}",
    ),
    token(
        "cloudflare-origin-ca-key",
        &["v1.0-"],
        r"{B}(?P<s>v1\.0-[a-f0-9]{24}-[a-f0-9]{146}){B}",
    ),
    token(
        "databricks-token",
        &["dapi"],
        r"{B}(?P<s>dapi[a-f0-9]{32}(?:-[0-9])?){B}",
    ),
    token(
        "digitalocean-token",
        &["dop_v1_", "doo_v1_", "dor_v1_"],
        r"{B}(?P<s>do[opr]_v1_[a-f0-9]{64}){B}",
    ),
    token_back(
        "discord-webhook-url",
        &["/api/webhooks/"],
        20,
        r"discord(?:app)?\.com/api/webhooks/(?P<s>[0-9]{17,20}/[A-Za-z0-9_-]{60,70})",
    ),
    token(
        "doppler-token",
        &[
            "dp.pt.",
            "dp.st.",
            "dp.sa.",
            "dp.ct.",
            "dp.scim.",
            "dp.audit.",
        ],
        r"{B}(?P<s>dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,44}){B}",
    ),
    token(
        "dropbox-token",
        &["sl."],
        r"{B}(?P<s>sl\.[A-Za-z0-9_=-]{130,}){E}",
    ),
    token(
        "duffel-token",
        &["duffel_test_", "duffel_live_"],
        r"{B}(?P<s>duffel_(?:test|live)_[A-Za-z0-9_=-]{43}){E}",
    ),
    token(
        "dynatrace-token",
        &["dt0c01."],
        r"{B}(?P<s>dt0c01\.[A-Z0-9]{24}\.[A-Z0-9]{64}){B}",
    ),
    token(
        "easypost-key",
        &["EZAK", "EZTK"],
        r"{B}(?P<s>EZ[AT]K[A-Za-z0-9]{54}){B}",
    ),
    token(
        "facebook-access-token",
        &["EAA"],
        r"{B}(?P<s>EAA[A-Za-z0-9]{100,}){B}",
    ),
    token(
        "flutterwave-secret-key",
        &["FLWSECK"],
        r"{B}(?P<s>FLWSECK(?:_TEST)?-[a-hA-H0-9]{32}-X){B}",
    ),
    token(
        "fly-io-token",
        &["fo1_", "fm1", "fm2"],
        r"{B}(?P<s>fo1_[A-Za-z0-9_-]{43}|fm[12][ar]?_[A-Za-z0-9+/]{100,}={0,3})",
    ),
    token(
        "frameio-token",
        &["fio-u-"],
        r"{B}(?P<s>fio-u-[A-Za-z0-9_=-]{64}){E}",
    ),
    token(
        "gcp-oauth-client-secret",
        &["GOCSPX-"],
        r"{B}(?P<s>GOCSPX-[A-Za-z0-9_-]{28}){E}",
    ),
    token(
        "google-oauth-token",
        &["ya29."],
        r"{B}(?P<s>ya29\.[A-Za-z0-9_-]{30,}){E}",
    ),
    token(
        "grafana-token",
        &["glc_", "glsa_", "eyJrIjoi"],
        r"{B}(?P<s>glc_[A-Za-z0-9+/]{32,400}={0,2}|glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}|eyJrIjoi[A-Za-z0-9]{60,400}={0,2})",
    ),
    token(
        "groq-api-key",
        &["gsk_"],
        r"{B}(?P<s>gsk_[A-Za-z0-9]{52}){B}",
    ),
    token(
        "harness-token",
        &["pat.", "sat."],
        r"{B}(?P<s>(?:pat|sat)\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{20}){B}",
    ),
    token(
        "heroku-api-key",
        &["HRKU-"],
        r"{B}(?P<s>HRKU-[A-Za-z0-9_-]{40,}){E}",
    ),
    token(
        "infracost-key",
        &["ico-"],
        r"{B}(?P<s>ico-[A-Za-z0-9]{32}){B}",
    ),
    token(
        "intra42-secret",
        &["s-s4t2ud-", "s-s4t2af-"],
        r"{B}(?P<s>s-s4t2(?:ud|af)-[a-f0-9]{64}){B}",
    ),
    token(
        "linear-api-key",
        &["lin_api_", "lin_oauth_"],
        r"{B}(?P<s>lin_(?:api|oauth)_[A-Za-z0-9]{40}){B}",
    ),
    token_back(
        "mailchimp-api-key",
        &["-us"],
        32,
        r"{B}(?P<s>[0-9a-f]{32}-us[0-9]{1,2}){B}",
    ),
    token(
        "mailgun-api-key",
        &["key-"],
        r"{B}(?P<s>key-[0-9a-f]{32}){B}",
    ),
    token(
        "mapbox-secret-token",
        &["sk.eyJ"],
        r"{B}(?P<s>sk\.eyJ[A-Za-z0-9_-]{50,}\.[A-Za-z0-9_-]{20,}){E}",
    ),
    token_back(
        "maxmind-license-key",
        &["_mmk"],
        40,
        r"{B}(?P<s>[A-Za-z0-9]{6}_[A-Za-z0-9]{29}_mmk){B}",
    ),
    token_back(
        "microsoft-teams-webhook-url",
        &["webhook.office.com"],
        64,
        r"webhook\.office\.com/webhookb2/(?P<s>[A-Za-z0-9@/_-]{40,})",
    ),
    token(
        "new-relic-key",
        &["NRAK-", "NRJS-", "NRII-", "NRAA-"],
        r"{B}(?P<s>NR(?:AK|JS|II|AA)-[A-Za-z0-9]{19,32}){B}",
    ),
    token(
        "notion-token",
        &["ntn_", "secret_"],
        r"{B}(?P<s>ntn_[0-9]{11}[A-Za-z0-9]{35}|secret_[A-Za-z0-9]{43}){B}",
    ),
    token(
        "octopus-deploy-api-key",
        &["API-"],
        r"{B}(?P<s>API-[A-Z0-9]{26}){B}",
    ),
    token(
        "onepassword-token",
        &["ops_eyJ", "A3-"],
        r"{B}(?P<s>ops_eyJ[A-Za-z0-9+/=_-]{100,}|A3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}){E}",
    ),
    token(
        "openshift-token",
        &["sha256~"],
        r"{B}(?P<s>sha256~[A-Za-z0-9_-]{43}){E}",
    ),
    token(
        "perplexity-api-key",
        &["pplx-"],
        r"{B}(?P<s>pplx-[A-Za-z0-9]{48}){B}",
    ),
    token(
        "planetscale-token",
        &["pscale_tkn_", "pscale_pw_", "pscale_oauth_"],
        r"{B}(?P<s>pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_.=-]{32,64}){E}",
    ),
    token(
        "plaid-access-token",
        &[
            "access-sandbox-",
            "access-development-",
            "access-production-",
        ],
        r"{B}(?P<s>access-(?:sandbox|development|production)-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}){B}",
    ),
    token(
        "postman-api-key",
        &["PMAK-"],
        r"{B}(?P<s>PMAK-[a-f0-9]{24}-[a-f0-9]{34}){B}",
    ),
    token(
        "prefect-api-key",
        &["pnu_"],
        r"{B}(?P<s>pnu_[A-Za-z0-9]{36}){B}",
    ),
    token("pulumi-token", &["pul-"], r"{B}(?P<s>pul-[a-f0-9]{40}){B}"),
    token(
        "pypi-token",
        &["pypi-AgEIcHlwaS5vcmc", "pypi-AgENdGVzdC5weXBpLm9yZw"],
        r"{B}(?P<s>pypi-(?:AgEIcHlwaS5vcmc|AgENdGVzdC5weXBpLm9yZw)[A-Za-z0-9_-]{50,}){E}",
    ),
    token(
        "readme-api-key",
        &["rdme_"],
        r"{B}(?P<s>rdme_[a-z0-9]{70}){B}",
    ),
    token(
        "replicate-token",
        &["r8_"],
        r"{B}(?P<s>r8_[A-Za-z0-9]{37}){B}",
    ),
    token(
        "rubygems-api-key",
        &["rubygems_"],
        r"{B}(?P<s>rubygems_[a-f0-9]{48}){B}",
    ),
    token(
        "scalingo-token",
        &["tk-us-"],
        r"{B}(?P<s>tk-us-[A-Za-z0-9_-]{48}){E}",
    ),
    token(
        "sendgrid-api-key",
        &["SG."],
        r"{B}(?P<s>SG\.[A-Za-z0-9_-]{20,24}\.[A-Za-z0-9_-]{39,50}){E}",
    ),
    token(
        "sendinblue-api-key",
        &["xkeysib-", "xsmtpsib-"],
        r"{B}(?P<s>x(?:key|smtp)sib-[a-f0-9]{64}-[A-Za-z0-9]{16}){B}",
    ),
    token(
        "sentry-token",
        &["sntrys_eyJ", "sntryu_"],
        r"{B}(?P<s>sntrys_eyJ[A-Za-z0-9+/=_-]{50,}|sntryu_[a-f0-9]{64})",
    ),
    token(
        "shippo-api-token",
        &["shippo_live_", "shippo_test_"],
        r"{B}(?P<s>shippo_(?:live|test)_[a-f0-9]{40}){B}",
    ),
    token(
        "shopify-token",
        &["shpat_", "shpca_", "shppa_", "shpss_"],
        r"{B}(?P<s>shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}){B}",
    ),
    token_back(
        "slack-webhook-url",
        &["hooks.slack.com/"],
        0,
        r"hooks\.slack\.com/(?:services|workflows|triggers)/(?P<s>[A-Za-z0-9_/+-]{30,})",
    ),
    token(
        "sonarqube-token",
        &["squ_", "sqp_", "sqa_"],
        r"{B}(?P<s>sq[upa]_[a-f0-9]{40}){B}",
    ),
    token(
        "sourcegraph-token",
        &["sgp_"],
        r"{B}(?P<s>sgp_(?:[a-f0-9]{16}_)?[a-f0-9]{40}){B}",
    ),
    token(
        "square-token",
        &["sq0atp-", "sq0csp-", "EAAA"],
        r"{B}(?P<s>sq0(?:atp|csp)-[A-Za-z0-9_-]{22,43}|EAAA[A-Za-z0-9_-]{60}){E}",
    ),
    token(
        "stripe-webhook-secret",
        &["whsec_"],
        r"{B}(?P<s>whsec_[A-Za-z0-9+/=]{24,}){B}",
    ),
    token_back(
        "telegram-bot-token",
        &[":AA"],
        16,
        r"{B}(?P<s>[0-9]{5,16}:AA[A-Za-z0-9_-]{33}){E}",
    ),
    token_back(
        "terraform-cloud-token",
        &[".atlasv1."],
        14,
        r"{B}(?P<s>[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,70}){E}",
    ),
    token("twilio-api-key", &["SK"], r"{B}(?P<s>SK[0-9a-fA-F]{32}){B}"),
    token(
        "twitter-bearer-token",
        &["AAAAAAAAAAAAAAAAAAAAA"],
        r"{B}(?P<s>A{20,24}[A-Za-z0-9%]{60,}){B}",
    ),
    token(
        "typeform-token",
        &["tfp_"],
        r"{B}(?P<s>tfp_[A-Za-z0-9_.=-]{59}){E}",
    ),
    token(
        "vault-token",
        &["hvs.", "hvb.", "hvr."],
        r"{B}(?P<s>hv[sbr]\.[A-Za-z0-9_-]{24,300}){E}",
    ),
    token(
        "xai-api-key",
        &["xai-"],
        r"{B}(?P<s>xai-[A-Za-z0-9]{80}){B}",
    ),
    token(
        "yandex-token",
        &["AQVN", "YC", "t1."],
        r"{B}(?P<s>AQVN[A-Za-z0-9_-]{35,38}|YC[A-Za-z0-9_-]{38}|t1\.[A-Za-z0-9_-]+={0,2}\.[A-Za-z0-9_-]{86}={0,2}){E}",
    ),
    // Structural shapes.
    token(
        "jwt",
        &["eyJ"],
        r"{B}(?P<s>eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}){E}",
    ),
    coded(
        "private-key-block",
        Kind::KeyBlock,
        &["-----BEGIN ", "---- BEGIN "],
        false,
    ),
    coded(
        "putty-private-key",
        Kind::Putty,
        &["PuTTY-User-Key-File-"],
        false,
    ),
    coded("url-credentials", Kind::Url, &["://"], false),
    Rule {
        name: HEADER_NAME,
        kind: Kind::Header,
        anchors: &["authorization"],
        any_case: true,
        back: 0,
        ahead: 1 << 16,
        bounded: true,
        pattern: r#"(?i)authorization["'\]]{0,2}{S}*[:=]{S}*["']?(?:basic|bearer|token|bot|ssws|apikey|api-key|digest){S}+(?P<s>{NS}+)"#,
    },
    Rule {
        name: "curl-credentials",
        kind: Kind::Token,
        anchors: &["-u ", "--user "],
        any_case: false,
        back: 1,
        ahead: 4096,
        bounded: false,
        pattern: r#"(?:^|[\s"'])(?:-u|--user)[ \t]+["']?[^\s:"'$]+:(?P<s>[^\s"']+)"#,
    },
    Rule {
        name: "netrc-password",
        kind: Kind::Token,
        anchors: &["login"],
        any_case: false,
        back: 0,
        ahead: 4096,
        bounded: true,
        pattern: r"login[ \t]+\S+[ \t]+password[ \t]+(?P<s>\S+)",
    },
    coded(
        "assigned-secret",
        Kind::Assignment,
        &["pass", "pwd", "secret", "token", "key", "auth", "cred"],
        true,
    ),
];
