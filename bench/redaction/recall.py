#!/usr/bin/env python3
"""Redaction recall through the real binary, per credential family.

For every family of the public secret-scanner catalogue with a recognisable
shape (provider tokens, keyword-named provider secrets, generic assignments,
URL credentials, connection strings, JWTs, private-key armor), generates
samples with random material, embeds each in everyday source lines of several
languages and formats, plants them in files of a temporary workspace, starts
`moat serve --workspace DIR` over stdio and reads each file back with
read_file (whole) and search_code (on the line's key name). A sample is
redacted when its secret part appears nowhere in either serialised answer,
plain or JSON-escaped. Prints recall per family and the share of families
whose every sample is redacted.

Usage: recall.py MOAT_BINARY [SEED]
"""
import json
import os
import random
import string
import subprocess
import sys
import tempfile

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "moat-recall", "version": "0"},
}

HEX = "0123456789abcdef"
ALNUM = string.ascii_letters + string.digits
UPPER_DIGITS = string.ascii_uppercase + string.digits
LOWER_DIGITS = string.ascii_lowercase + string.digits
B64 = ALNUM + "+/"


def r(alphabet, n):
    s = "".join(random.choice(alphabet) for _ in range(n))
    # Random material always mixes classes, as real tokens do.
    return s


def uuid():
    return "-".join(r(HEX, n) for n in (8, 4, 4, 4, 12))


# Families whose token has its own shape: name -> generator of the secret.
SHAPED = {
    "aws-access-key-id": lambda: random.choice(["AKIA", "ASIA"]) + r(UPPER_DIGITS, 16),
    "aws-bedrock-key": lambda: "ABSK" + r(ALNUM, 120),
    "github-pat": lambda: "ghp_" + r(ALNUM, 36),
    "github-oauth": lambda: "gho_" + r(ALNUM, 36),
    "github-app-token": lambda: random.choice(["ghu_", "ghs_"]) + r(ALNUM, 36),
    "github-refresh-token": lambda: "ghr_" + r(ALNUM, 36),
    "github-fine-grained-pat": lambda: "github_pat_" + r(ALNUM + "_", 82),
    "gitlab-pat": lambda: "glpat-" + r(ALNUM + "_-", 20),
    "gitlab-deploy-token": lambda: "gldt-" + r(ALNUM + "_-", 20),
    "gitlab-pipeline-trigger": lambda: "glptt-" + r(HEX, 40),
    "gitlab-runner-token": lambda: "glrt-" + r(ALNUM, 20),
    "gitlab-runner-registration": lambda: "GR1348941" + r(ALNUM, 20),
    "gitlab-feed-token": lambda: "glft-" + r(ALNUM, 20),
    "gitlab-oauth-secret": lambda: "gloas-" + r(ALNUM, 64),
    "slack-bot-token": lambda: "xoxb-" + r(string.digits, 12) + "-" + r(string.digits, 12) + "-" + r(ALNUM, 24),
    "slack-user-token": lambda: "xoxp-" + r(string.digits, 12) + "-" + r(string.digits, 12) + "-" + r(ALNUM, 32),
    "slack-app-token": lambda: "xapp-1-A" + r(UPPER_DIGITS, 10) + "-" + r(string.digits, 13) + "-" + r(HEX, 64),
    "slack-config-token": lambda: "xoxe.xoxp-1-" + r(ALNUM, 160),
    "slack-webhook": lambda: "https://hooks.slack.com/services/T" + r(UPPER_DIGITS, 8) + "/B" + r(UPPER_DIGITS, 8) + "/" + r(ALNUM, 24),
    "stripe-secret-key": lambda: "sk_live_" + r(ALNUM, 24),
    "stripe-restricted-key": lambda: "rk_live_" + r(ALNUM, 24),
    "stripe-webhook-secret": lambda: "whsec_" + r(ALNUM, 32),
    "openai-key": lambda: "sk-proj-" + r(ALNUM + "_-", 48) + "T3BlbkFJ" + r(ALNUM, 20),
    "anthropic-key": lambda: "sk-ant-api03-" + r(ALNUM + "_-", 93) + "AA",
    "anthropic-admin-key": lambda: "sk-ant-admin01-" + r(ALNUM + "_-", 93) + "AA",
    "gcp-api-key": lambda: "AIza" + r(ALNUM + "_-", 35),
    "gcp-oauth-client-secret": lambda: "GOCSPX-" + r(ALNUM + "_-", 28),
    "google-oauth-access-token": lambda: "ya29." + r(ALNUM + "_-", 120),
    "azure-ad-client-secret": lambda: r(ALNUM, 3) + random.choice("0123456789") + "Q~" + r(ALNUM + "_~.-", 34),
    "npm-token": lambda: "npm_" + r(ALNUM, 36),
    "pypi-token": lambda: "pypi-AgEIcHlwaS5vcmc" + r(ALNUM + "_-", 70),
    "hugging-face-token": lambda: "hf_" + r(string.ascii_letters, 34),
    "hugging-face-org-token": lambda: "api_org_" + r(string.ascii_letters, 34),
    "shopify-access-token": lambda: "shpat_" + r(HEX, 32),
    "shopify-custom-app-token": lambda: "shpca_" + r(HEX, 32),
    "shopify-private-app-token": lambda: "shppa_" + r(HEX, 32),
    "shopify-shared-secret": lambda: "shpss_" + r(HEX, 32),
    "digitalocean-pat": lambda: "dop_v1_" + r(HEX, 64),
    "digitalocean-oauth": lambda: "doo_v1_" + r(HEX, 64),
    "digitalocean-refresh": lambda: "dor_v1_" + r(HEX, 64),
    "databricks-token": lambda: "dapi" + r(HEX, 32),
    "doppler-token": lambda: "dp.pt." + r(ALNUM, 43),
    "pulumi-token": lambda: "pul-" + r(HEX, 40),
    "postman-api-key": lambda: "PMAK-" + r(HEX, 24) + "-" + r(HEX, 34),
    "linear-api-key": lambda: "lin_api_" + r(ALNUM, 40),
    "grafana-cloud-token": lambda: "glc_" + r(ALNUM, 64),
    "grafana-service-account": lambda: "glsa_" + r(ALNUM, 32) + "_" + r(HEX, 8),
    "grafana-api-key": lambda: "eyJrIjoi" + r(ALNUM, 70),
    "age-secret-key": lambda: "AGE-SECRET-KEY-1" + r("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58),
    "vault-service-token": lambda: "hvs." + r(ALNUM + "_-", 90),
    "vault-batch-token": lambda: "hvb." + r(ALNUM + "_-", 150),
    "1password-service-token": lambda: "ops_eyJ" + r(B64, 250),
    "1password-secret-key": lambda: "A3-" + r(UPPER_DIGITS, 6) + "-" + r(UPPER_DIGITS, 11) + "-" + "-".join(r(UPPER_DIGITS, 5) for _ in range(3)),
    "sendgrid-api-key": lambda: "SG." + r(ALNUM + "_-", 22) + "." + r(ALNUM + "_-", 43),
    "mailgun-private-key": lambda: "key-" + r(HEX, 32),
    "mailchimp-api-key": lambda: r(HEX, 32) + "-us" + str(random.randint(1, 20)),
    "twilio-api-key": lambda: "SK" + r(HEX, 32),
    "sendinblue-api-key": lambda: "xkeysib-" + r(HEX, 64) + "-" + r(ALNUM, 16),
    "heroku-api-key-v2": lambda: "HRKU-AA" + r(ALNUM + "_-", 58),
    "alibaba-access-key-id": lambda: "LTAI" + r(ALNUM, 20),
    "adobe-client-secret": lambda: "p8e-" + r(ALNUM, 32),
    "airtable-pat": lambda: "pat" + r(ALNUM, 14) + "." + r(HEX, 64),
    "artifactory-api-key": lambda: "AKCp" + r(ALNUM, 69),
    "artifactory-reference-token": lambda: "cmVmdGtu" + r(ALNUM, 55),
    "atlassian-api-token": lambda: "ATATT3" + r(ALNUM + "_-", 186),
    "clojars-token": lambda: "CLOJARS_" + r(LOWER_DIGITS, 60),
    "cloudflare-origin-ca-key": lambda: "v1.0-" + r(HEX, 24) + "-" + r(HEX, 146),
    "discord-webhook": lambda: "https://discord.com/api/webhooks/" + r(string.digits, 18) + "/" + r(ALNUM + "_-", 68),
    "dropbox-short-lived-token": lambda: "sl." + r(ALNUM + "_-", 135),
    "duffel-token": lambda: "duffel_test_" + r(ALNUM + "_-", 43),
    "dynatrace-token": lambda: "dt0c01." + r(UPPER_DIGITS, 24) + "." + r(UPPER_DIGITS, 64),
    "easypost-key": lambda: "EZAK" + r(ALNUM, 54),
    "facebook-access-token": lambda: "EAAC" + r(ALNUM, 150),
    "flutterwave-secret-key": lambda: "FLWSECK_TEST-" + r("abcdef" + string.digits, 32) + "-X",
    "fly-io-token": lambda: "fo1_" + r(ALNUM + "_-", 43),
    "frameio-token": lambda: "fio-u-" + r(ALNUM + "_-", 64),
    "groq-api-key": lambda: "gsk_" + r(ALNUM, 52),
    "harness-pat": lambda: "pat." + r(ALNUM, 22) + "." + r(ALNUM, 24) + "." + r(ALNUM, 20),
    "infracost-key": lambda: "ico-" + r(ALNUM, 32),
    "intra42-secret": lambda: "s-s4t2ud-" + r(HEX, 64),
    "mapbox-secret-token": lambda: "sk.eyJ" + r(ALNUM, 60) + "." + r(ALNUM, 22),
    "maxmind-license-key": lambda: r(ALNUM, 6) + "_" + r(ALNUM, 29) + "_mmk",
    "microsoft-teams-webhook": lambda: "https://acme.webhook.office.com/webhookb2/" + uuid() + "@" + uuid() + "/IncomingWebhook/" + r(HEX, 32) + "/" + uuid(),
    "new-relic-user-key": lambda: "NRAK-" + r(UPPER_DIGITS, 27),
    "new-relic-browser-key": lambda: "NRJS-" + r(HEX, 19),
    "notion-token": lambda: "ntn_" + r(string.digits, 11) + r(ALNUM, 35),
    "octopus-deploy-key": lambda: "API-" + r(UPPER_DIGITS, 26),
    "openshift-token": lambda: "sha256~" + r(ALNUM + "_-", 43),
    "perplexity-key": lambda: "pplx-" + r(ALNUM, 48),
    "planetscale-token": lambda: "pscale_tkn_" + r(ALNUM, 43),
    "planetscale-password": lambda: "pscale_pw_" + r(ALNUM, 43),
    "plaid-access-token": lambda: "access-sandbox-" + uuid(),
    "prefect-key": lambda: "pnu_" + r(ALNUM, 36),
    "readme-key": lambda: "rdme_" + r(LOWER_DIGITS, 70),
    "replicate-token": lambda: "r8_" + r(ALNUM, 37),
    "rubygems-key": lambda: "rubygems_" + r(HEX, 48),
    "scalingo-token": lambda: "tk-us-" + r(ALNUM + "_-", 48),
    "sentry-user-token": lambda: "sntryu_" + r(HEX, 64),
    "sentry-org-token": lambda: "sntrys_eyJ" + r(B64, 120),
    "shippo-token": lambda: "shippo_live_" + r(HEX, 40),
    "sonarqube-token": lambda: "squ_" + r(HEX, 40),
    "sourcegraph-token": lambda: "sgp_" + r(HEX, 16) + "_" + r(HEX, 40),
    "square-access-token": lambda: "EAAA" + r(ALNUM + "_-", 60),
    "square-oauth-secret": lambda: "sq0csp-" + r(ALNUM + "_-", 43),
    "telegram-bot-token": lambda: r(string.digits, 10) + ":AA" + r(ALNUM + "_-", 33),
    "terraform-cloud-token": lambda: r(ALNUM, 14) + ".atlasv1." + r(ALNUM + "_-", 67),
    "twitter-bearer-token": lambda: "A" * 22 + r(ALNUM, 90),
    "typeform-token": lambda: "tfp_" + r(ALNUM + "_-", 59),
    "xai-key": lambda: "xai-" + r(ALNUM, 80),
    "yandex-api-key": lambda: "AQVN" + r(ALNUM + "_-", 36),
    "jwt": lambda: "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9." + "eyJ" + r(ALNUM, 40) + "." + r(ALNUM + "_-", 43),
}

# Catalogue families recognised by a provider keyword in the variable name
# (their tokens are hex, UUIDs or base64 without a prefix).
KEYWORDED = {
    "datadog": lambda: r(HEX, 40), "algolia": lambda: r(HEX, 32), "asana": lambda: r(string.digits, 16),
    "bitbucket": lambda: r(ALNUM, 32), "cloudflare": lambda: r(ALNUM + "_-", 40), "contentful": lambda: r(ALNUM + "_-", 43),
    "discord": lambda: r(ALNUM, 24) + "." + r(ALNUM, 6) + "." + r(ALNUM, 27), "fastly": lambda: r(ALNUM + "_-", 32),
    "heroku": uuid, "hubspot": uuid, "intercom": lambda: r(ALNUM + "=", 60), "jfrog": lambda: r(ALNUM, 73),
    "launchdarkly": lambda: "api-" + uuid(), "looker": lambda: r(ALNUM, 20), "mattermost": lambda: r(LOWER_DIGITS, 26),
    "netlify": lambda: r(ALNUM + "_-", 43), "okta": lambda: "00" + r(ALNUM + "_-", 40), "snyk": uuid,
    "sumologic": lambda: r(ALNUM, 64), "travisci": lambda: r(ALNUM, 22), "twitch": lambda: r(LOWER_DIGITS, 30),
    "twitter": lambda: r(ALNUM, 50), "zendesk": lambda: r(ALNUM, 40), "azure-storage": lambda: r(B64, 86) + "==",
    "aws-secret-access-key": lambda: r(B64, 40), "kraken": lambda: r(B64, 86) + "==", "kucoin": uuid,
    "gitter": lambda: r(HEX, 40), "freshbooks": lambda: r(HEX, 64), "nytimes": lambda: r(ALNUM, 32),
    "lob": lambda: "live_" + r(HEX, 35), "messagebird": lambda: r(ALNUM, 25), "sendbird": lambda: r(HEX, 40),
    "squarespace": uuid, "coinbase": lambda: r(ALNUM, 64), "etsy": lambda: r(LOWER_DIGITS, 24),
    "finicity": lambda: r(HEX, 20), "linkedin": lambda: r(ALNUM, 16), "codecov": lambda: r(HEX, 32),
    "confluent": lambda: r(ALNUM, 64), "vault-legacy": lambda: "s." + r(ALNUM, 24),
}
KEY_SUFFIXES = ["_API_KEY", "_TOKEN", "_SECRET", "_ACCESS_TOKEN", "_CLIENT_SECRET", "_API_TOKEN"]

GENERIC_PASSWORDS = lambda: r(ALNUM, 6) + random.choice("!#%^*+=?~") + r(ALNUM, 6) + random.choice(string.digits)

# Templates: (file name, text with {name} and {value}).
TEMPLATES = [
    ("settings.py", "import os\n\n{name} = \"{value}\"\nDEBUG = False\n"),
    ("config.js", "module.exports = {{\n  {name}: '{value}',\n}};\n"),
    ("app.yaml", "service:\n  {name}: {value}\n  replicas: 2\n"),
    (".env.example.local", "{name}={value}\n"),
    ("config.json", "{{\n  \"{name}\": \"{value}\"\n}}\n"),
    ("main.go", "package main\n\nfunc main() {{\n\t{name} := \"{value}\"\n\t_ = {name}\n}}\n"),
    ("Cargo-config.toml", "[service]\n{name} = \"{value}\"\n"),
    ("deploy.sh", "#!/bin/sh\nexport {name}='{value}'\n"),
]


def generic_families():
    """Families of generic shapes: (family, list of (file, text, secret))."""
    fams = {}
    for name in ["password", "DB_PASSWORD", "passwd", "pwd", "api_token", "secret", "token", "auth_token",
                 "client_secret", "private_key", "credential", "apiKey", "secret_key", "access_key"]:
        samples = []
        for file, tpl in TEMPLATES:
            v = GENERIC_PASSWORDS()
            samples.append((file, tpl.format(name=name, value=v), v))
        fams["assignment-" + name.lower()] = samples
    url = []
    for scheme in ["postgres", "postgresql", "mysql", "mongodb+srv", "redis", "rediss", "amqp", "https", "ftp", "smtp", "ldap"]:
        for user in ["app", ""]:
            v = GENERIC_PASSWORDS()
            url.append(("dsn.py", f"DSN = \"{scheme}://{user}:{v}@db.internal:5432/app\"\n", v))
    v = r(ALNUM, 5) + "@" + r(ALNUM, 6) + "9"
    url.append(("dsn.yaml", f"url: redis://:{v}@cache:6379\n", v))
    fams["url-credentials"] = url
    conn = []
    for tpl in ["Server=db;Database=app;User Id=sa;Password={v};", "jdbc:postgresql://db:5432/app?user=app&password={v}",
                "host=db port=5432 dbname=app user=app password={v}", "Data Source=db;Initial Catalog=app;Pwd={v};"]:
        v = GENERIC_PASSWORDS()
        conn.append(("conn.cfg", "CONNECTION = \"" + tpl.format(v=v) + "\"\n", v))
    fams["connection-string"] = conn
    body = "\n".join(r(B64, 64) for _ in range(4))
    pems = []
    for label in ["PRIVATE KEY", "RSA PRIVATE KEY", "EC PRIVATE KEY", "DSA PRIVATE KEY", "OPENSSH PRIVATE KEY",
                  "ENCRYPTED PRIVATE KEY", "PGP PRIVATE KEY BLOCK"]:
        line = body.split("\n")[1]
        pems.append(("key.pem", f"-----BEGIN {label}-----\n{body}\n-----END {label}-----\n", line))
    fams["private-key-block"] = pems
    putty = r(B64, 64)
    fams["putty-private-key"] = [("key.ppk", "PuTTY-User-Key-File-2: ssh-rsa\nEncryption: none\nComment: k\nPublic-Lines: 1\n"
                                  + r(B64, 64) + "\nPrivate-Lines: 1\n" + putty + "\nPrivate-MAC: " + r(HEX, 40) + "\n", putty)]
    t = r(ALNUM, 40)
    fams["authorization-header"] = [("req.http", f"GET / HTTP/1.1\nAuthorization: Bearer {t}\n", t),
                                    ("client.py", f"headers = {{\"Authorization\": \"Basic {t}\"}}\n", t)]
    p = GENERIC_PASSWORDS()
    fams["curl-user"] = [("get.sh", f"curl -u admin:{p} https://api.internal/\n", p)]
    return fams


def families():
    fams = {}
    for fam, gen in SHAPED.items():
        samples = []
        for file, tpl in TEMPLATES:
            v = gen()
            samples.append((file, tpl.format(name="endpoint_value", value=v), v))
        fams[fam] = samples
    for fam, gen in KEYWORDED.items():
        samples = []
        for i, (file, tpl) in enumerate(TEMPLATES):
            v = gen()
            name = fam.upper().replace("-", "_") + KEY_SUFFIXES[i % len(KEY_SUFFIXES)]
            samples.append((file, tpl.format(name=name, value=v), v))
        fams["keyword-" + fam] = samples
    fams.update(generic_families())
    return fams


class Moat:
    def __init__(self, binary, tree):
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": "/nonexistent"}
        self.proc = subprocess.Popen([binary, "serve", "--workspace", tree], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
        self.next_id = 1

    def call(self, tool, args):
        req = {"jsonrpc": "2.0", "id": self.next_id, "method": "tools/call",
               "params": {"name": tool, "arguments": args, "_meta": META}}
        self.next_id += 1
        self.proc.stdin.write((json.dumps(req) + "\n").encode())
        self.proc.stdin.flush()
        return self.proc.stdout.readline().decode()

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


def leaked(line, secret):
    escaped = json.dumps(secret)[1:-1]
    return secret in line or escaped in line


def main():
    binary = sys.argv[1]
    random.seed(int(sys.argv[2]) if len(sys.argv) > 2 else 15)
    fams = families()
    with tempfile.TemporaryDirectory(prefix="moat-recall-") as tree:
        planted = []
        for fam, samples in fams.items():
            for i, (file, text, secret) in enumerate(samples):
                rel = f"{fam}/{i}-{file}"
                os.makedirs(os.path.join(tree, fam), exist_ok=True)
                with open(os.path.join(tree, rel), "w") as f:
                    f.write(text)
                planted.append((fam, rel, text, secret))
        m = Moat(binary, tree)
        per_family = {}
        for fam, rel, text, secret in planted:
            ok = not leaked(m.call("read_file", {"path": rel}), secret)
            # search_code for a word of the secret's line that is not the
            # secret (the answer echoes the pattern back).
            first = next((l for l in text.split("\n") if secret.split("\n")[0][:12] in l), text.split("\n")[0])
            for ch in "\"':=,;{}()[]<>":
                first = first.replace(ch, " ")
            words = [w for w in first.split() if w.isidentifier() and w not in secret]
            if words:
                ok = ok and not leaked(m.call("search_code", {"pattern": words[0], "path": os.path.dirname(rel)}), secret)
            good, total = per_family.get(fam, (0, 0))
            per_family[fam] = (good + ok, total + 1)
        m.close()
    full = 0
    print(f"{'family':<36} {'redacted':>9}")
    for fam, (good, total) in per_family.items():
        full += good == total
        mark = "" if good == total else "   <- missed"
        print(f"{fam:<36} {good:>4}/{total:<4}{mark}")
    n = len(per_family)
    samples = sum(t for _, t in per_family.values())
    redacted = sum(g for g, _ in per_family.values())
    print(f"\nfamilies fully redacted: {full}/{n} = {100 * full / n:.1f}%")
    print(f"samples redacted: {redacted}/{samples} = {100 * redacted / samples:.1f}%")


if __name__ == "__main__":
    main()
