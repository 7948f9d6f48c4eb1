//! Families that read what a text asks of its reader, in plain words: a
//! request to disclose the reader's own instructions, a role to play, data
//! moved to a target outside (with or without a scheme, an address quoted
//! or not), and instructions addressed to the one reading (a TODO that asks
//! for an action on people, data or money, "do the following first", words
//! about "your response", a note to the AI).
//!
//! A verb near a link is not exfiltration: the text must name data worth
//! taking (secrets, credentials, the conversation, someone's personal data)
//! and a place outside to put it. An install one-liner, "send patches to
//! the list", "upload artifacts to https://…" are documentation.
//!
//! Every pattern runs on one line of the lowered text or one paragraph of
//! the prose view (see `join`), only where the gate found an anchor.

use std::ops::Range;
use std::sync::LazyLock;

use regex::Regex;

use super::classic::compile;
use super::signals::Family;

/// Data worth taking: secrets, credentials, the conversation, someone's
/// personal data, the files that hold them.
const DATA: &str = r"(?:{B}(?:secrets?|credentials?|passwords?|passphrases?|passcodes?|api[\s_-]?keys?|access[\s_-]?keys?|private[\s_-]?keys?|secret[\s_-]?keys?|ssh[\s_-]?keys?|(?:access|auth|session|bearer|api|github|aws|refresh|jwt)[\s_-]?tokens?|tokens|session[\s_-]?(?:ids?|cookies?|tokens?)|cookies|env(?:ironment)?[\s_-]?(?:variables?|vars|files?)|id_rsa|conversation|chat[\s_-]?(?:history|log|logs|transcript)|(?:message|browsing|search)[\s_-]?history|system[\s_-]?prompt|(?:initial|original|hidden)[\s_-]?(?:prompt|instructions)|(?:security|verification|2fa|mfa|one[\s-]?time|login)[\s_-]?codes?|otp|credit[\s_-]?cards?|card[\s_-]?numbers?|cvv|bank[\s_-]?(?:accounts?|details|statements?|logins?)|iban|social[\s_-]?security(?:[\s_-]?numbers?)?|ssn|passports?(?:[\s_-]?numbers?)?|personal[\s_-]?(?:data|information|details|info)|pii|(?:user|user's|users'|customer's|customers'|their|his|her)[\s_-]+(?:data|files|emails?|messages|documents|contacts|details|information|addresses|phone[\s_-]?numbers?|query|question|input)|(?:all|every)[\s_-]+(?:the[\s_-]+|of[\s_-]+the[\s_-]+|of[\s_-]+my[\s_-]+)?(?:emails?|messages|files|documents|contacts|records|notes|invoices|keys|channels)|keychain|wallet|seed[\s_-]?phrase|recovery[\s_-]?(?:phrase|codes?)|mnemonic|summary\s+of\s+(?:this|the|our)\s+(?:conversation|chat|session))(?:{B}|$)|[~.$/\w-]*(?:\.env|id_rsa|\.ssh|\.aws|\.npmrc|\.netrc|\.pgpass|\.git-credentials|/etc/passwd|/etc/shadow){B})";

/// A place outside: a URL with or without a scheme, a host with a path, an
/// e-mail address (quoted or not), a webhook, "my server".
const TARGET: &str = r"(?:https?://|www\.[a-z0-9-]|[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,}(?::\d+)?/|[a-z0-9._%+-]+@[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,}|[\x22'“`][a-z0-9._%+-]+@|(?:my|our|this|an?\s+external|the\s+attacker'?s?|a\s+remote)\s+(?:server|endpoint|webhook|url|site|website|email(?:\s+address)?|inbox|bucket|host)|{B}webhook{B}|{B}(?:the\s+)?attacker{B})";

/// A URL or a host with a query parameter waiting for a value.
const TARGET_PARAM: &str =
    r"(?:https?://)?[a-z0-9-]+(?:\.[a-z0-9-]+)+(?::\d+)?/\S*?[?&][a-z0-9_]+=";

/// The start of a TODO (or FIXME) note, with an owner in parentheses.
const TODO: &str = r"{B}(?:todo|fixme)(?:\s*\([^)\n]{0,30}\))?\s*[:-]?\s*(?:please\s+|you\s+(?:must|should|need\s+to)\s+)?";

/// An AI as the one addressed.
const AI: &str = r"(?:ai|llm|llms|(?:large\s+)?language\s+models?|assistants?|ai\s+(?:assistants?|agents?|models?|tools?|systems?)|chatbots?|agents?|coding\s+(?:agents?|assistants?)|copilot|claude|chatgpt|gpt|gemini|cursor|bots?|models?|automated\s+(?:systems?|agents?|tools?|readers?|assistants?))";

/// The families of this module, each with its signal index in
/// `super::SIGNALS`.
pub(super) const READER_FAMILIES: &[Family] = &[
    // INJ03: asks for the reader's own instructions.
    Family {
        signal: 2,
        prefilter: true,
        anchors: &[
            "sentence of",
            "line of",
            "word of",
            "words of",
            "part of",
            "paragraph of",
            "lines of",
            "sentences of",
            "what's",
            "what is",
            "what are",
            "your ",
            "initial",
            "original",
            "hidden",
            "secret",
            "previous",
            "earlier",
            "preceding",
            "pre-prompt",
            "preprompt",
            "system prompt",
            "system message",
            "system instruction",
            "above",
            "so far",
            "were given",
            "been given",
            "given to you",
            "you received",
            "you were told",
            "what is your",
            "what are your",
            "what was your",
            "what were your",
            "tell me your",
            "initialization",
            "starting with",
            "beginning with",
        ],
        patterns: &[
            r"{B}(?:sentence|line|word|words|part|paragraph|lines|sentences|characters)\s+of\s+your\s+(?:\w+\s+)?(?:system\s+(?:prompt|message|instructions?)|initial\s+(?:prompt|instructions)|instructions|prompt){B}",
            r"{B}what(?:'s|\s+is|\s+are|\s+was|\s+were)\s+(?:the\s+)?(?:\w+\s+){0,3}(?:of\s+)?your\s+(?:\w+\s+)?(?:system\s+prompt|initial\s+prompt|instructions|rules|guidelines|directives|secret|password|configuration){B}",
            r"(?:^|[.!?:;]\s+|{B}please\s+|{B}now\s+|{B}then\s+|{B}and\s+|{B}to\s+)[\s>*#/-]{0,6}(?:output|reveal|print|disclose|leak|dump|expose)\s+your\s+(?:unique\s+|internal\s+|secret\s+|private\s+|hidden\s+|full\s+|entire\s+|current\s+)?(?:id|identifier|configuration|config|settings|instructions|rules|secrets?|password|api\s+key|credentials|system\s+prompt|prompt|guidelines){B}",
            r"{B}(?:repeat|print|output|reveal|show|display|dump|share|tell\s+me|give\s+me|write\s+(?:out|down)|recite|spell\s+out|leak|disclose|paste|echo|provide|type\s+out){B}[^.\n]{0,60}?{B}(?:your|the|my|its|all|any)\s+(?:\w+\s+){0,3}?(?:initial|original|hidden|secret|previous|earlier|preceding|first|pre-?)[\s-]?(?:prompts?|instructions|directives|guidelines){B}",
            r"{B}(?:repeat|print|output|reveal|show|display|dump|share|tell\s+me|give\s+me|write\s+(?:out|down)|recite|spell\s+out|leak|disclose|paste|echo|provide){B}[^.\n]{0,60}?{B}your\s+(?:\w+\s+){0,2}?system\s+(?:prompt|message|instructions?){B}",
            r"{B}(?:repeat|print|output|reveal|show|display|dump|share|write\s+(?:out|down)|recite|copy|spell\s+out|paste|echo|list)\s+(?:all\s+|back\s+|out\s+|me\s+)?(?:of\s+)?(?:the\s+)?(?:words|text|everything|content|sentences|tokens|instructions|messages)\s+(?:above|before\s+this|so\s+far|preceding|of\s+(?:the|your)\s+(?:previous|earlier|first|initial)\s+(?:messages?|prompts?))",
            r"{B}(?:instructions|prompt|rules|directives|guidelines)\s+(?:that\s+)?(?:you\s+(?:were|have\s+been)\s+given|given\s+to\s+you|you\s+received|you\s+were\s+told){B}",
            r"{B}(?:what\s+(?:is|are|was|were)|tell\s+me)\s+your\s+(?:\w+\s+)?(?:system\s+prompt|instructions|initial\s+prompt|rules|guidelines|directives|secret|password){B}",
            r"{B}initialization\s+above{B}",
            r"{B}(?:starting|beginning)\s+(?:with|from)\s+(?:the\s+(?:phrase|words?|sentence)\s+)?[\x22'“]you\s+are{B}",
        ],
    },
    // INJ04: gives the reader a role to play, free of its rules. Its
    // patterns may start with a word of one or two letters (`a`, `an`,
    // `in`, `do`, `is`), which stands everywhere in text: the regex engine
    // runs straight through rather than restart at each.
    Family {
        signal: 3,
        prefilter: false,
        anchors: &[
            "as if you",
            "let's act",
            "lets act",
            "godmode",
            "god mode",
            "safety",
            "content restrictions",
            "ethical",
            "protocols",
            "procedures",
            "safeguards",
            "disclaimer",
            "respond as",
            "answer as",
            "reply as",
            "behave as",
            "behave like",
            "you will act",
            "you are now in",
            "from now on",
            "act as",
            "act like",
            "pretend",
            "roleplay",
            "role-play",
            "role play",
            "play the role",
            "play the part",
            "in character",
            "break character",
            "breaking character",
            "ethical",
            "moral",
            "refuse",
            "policy",
            "policies",
            "anything now",
            " mode",
            "jailbr",
            "unfiltered",
            "uncensored",
            "amoral",
            "unrestricted",
            "unethical",
            "simulate",
            "emulate",
            "in this story",
            "in this hypothetical",
            "in this fictional",
            "in this game",
            "in this scenario",
            "in this world",
            "in this roleplay",
            "let's play",
            "lets play",
            "let's pretend",
            "answer every",
            "answer any",
            "answer all",
            "respond to every",
            "respond to any",
            "reply to every",
            "reply to any",
        ],
        patterns: &[
            r"{B}as\s+if\s+you\s+(?:are|were)\s+(?:an?\s+)?(?:\w+\s+){0,3}(?:ai|assistant|chatbot|model|bot|llm|character|persona){B}",
            r"{B}let'?s\s+act\s+out{B}",
            r"{B}god\s*mode{B}",
            r"{B}(?:safety|content|ethical|moral)\s+(?:restrictions|filters|guidelines|guardrails|protocols|checks|constraints|limits)\s*(?::|=|are|is|have\s+been|were|now)?\s*(?:none|disabled|off|suspended|removed|lifted|deactivated|turned\s+off|bypassed){B}",
            r"{B}(?:standard|safety|normal|usual)\s+(?:protocols|procedures|guidelines|restrictions|safeguards|filters)\s+(?:are\s+|have\s+been\s+|were\s+)?(?:suspended|disabled|lifted|deactivated|removed|bypassed|overridden){B}",
            r"{B}(?:omit|skip|drop|never\s+(?:include|add|give|issue)|don't\s+(?:include|add|give|issue)|do\s+not\s+(?:need\s+to\s+)?(?:include|add|give|issue)|no\s+need\s+(?:for|to\s+(?:include|add|give|issue)))\s+(?:any\s+)?(?:\w+\s+){0,2}disclaimers?{B}",
            r"{B}you\s+are\s+now\s+in\s+(?:[a-z]+\s+){1,3}mode{B}",
            r"{B}from\s+now\s+on\s*,?\s+(?:you\s+(?:are|will|must|shall|should|can)|you're|you'll|act|pretend|respond|answer|reply|behave|roleplay|only\s+(?:respond|answer|reply|speak|talk)){B}",
            r"{B}(?:you\s+(?:are\s+(?:going\s+)?to|will|must|shall)|you're\s+going\s+to|you'll|i\s+want\s+you\s+to|please|now)\s+(?:now\s+|always\s+)?(?:act|pretend|behave|respond|answer|roleplay|role-play|role\s+play|play\s+the\s+(?:role|part))\s+(?:as|like|to\s+be){B}",
            r"{B}pretend\s+(?:that\s+)?(?:you\s+are|you're){B}|{B}pretend\s+to\s+be\s+(?:an?\s+)?(?:\w+\s+){0,2}(?:ai|assistant|chatbot|bot|model|human|person|character|persona|hacker|criminal|villain|dan){B}",
            r"{B}(?:stay|remain|staying|remaining|keep)\s+in\s+character{B}|{B}break(?:ing)?\s+character{B}",
            r"{B}(?:without|no|free\s+(?:of|from)|not\s+bound\s+by|unbound\s+by|ignore|bypass|disregard|beyond)\s+(?:any\s+|all\s+|your\s+)?(?:ethical|moral|safety)\s+(?:guidelines|restrictions|constraints|principles|filters|policies|rules|limits|boundaries|considerations)",
            r"{B}(?:doesn't|does\s+not|don't|do\s+not|never|won't|will\s+not)\s+(?:have\s+any\s+|has\s+any\s+|follow\s+any\s+|care\s+about\s+|abide\s+by\s+any\s+)(?:ethical|moral|ethics|morals){B}",
            r"{B}(?:never|not|won't|will\s+not|cannot|can't)\s+refuse\s+(?:an?\s+|any\s+)?(?:request|question|order|prompt|task|command)|{B}(?:never|not|won't|will\s+not|cannot|can't)\s+refuse\s+to\s+(?:answer|respond|comply|help|do|reply)",
            r"{B}(?:openai|anthropic)(?:'s)?\s+(?:content\s+|usage\s+)?polic(?:y|ies)",
            r"{B}do\s+anything\s+now{B}|{B}(?:dan|stan|dude|god|evil|chaos)\s+mode{B}",
            r"{B}jailbr(?:eak|oken)\s+(?:prompt|mode|version|ai|model|assistant|persona|chatbot|gpt)|{B}(?:is|are|been|be|now)\s+jailbroken{B}",
            r"{B}(?:an?\s+)?(?:unfiltered|uncensored|amoral|unrestricted|unethical)\s+(?:and\s+\w+\s+)?(?:ai|chatbot|assistant|model|language\s+model|bot|persona|character|version\s+of\s+(?:yourself|you|chatgpt|gpt|claude)){B}",
            r"{B}(?:simulate|emulate)\s+(?:an?\s+|the\s+)?(?:\w+\s+){0,2}(?:ai|chatbot|persona|assistant|gpt|chatgpt){B}",
            r"{B}in\s+this\s+(?:hypothetical\s+|fictional\s+|imaginary\s+)?(?:story|fiction|roleplay|role-play|game|scenario|world|universe)\s*,?\s+you\s+(?:are|will|play|must|should|have\s+to){B}",
            r"{B}let'?s\s+(?:play\s+a\s+role|roleplay|role-play|pretend\s+(?:that\s+)?(?:you|to\s+be)){B}",
            r"{B}(?:answer|respond\s+to|reply\s+to)\s+(?:every|any|all)\s+(?:question|request|prompt|query)s?\s+(?:no\s+matter|regardless|without|even\s+if)",
        ],
    },
    // INJ07: moves data worth taking to a place outside.
    Family {
        signal: 6,
        prefilter: true,
        anchors: &[
            "secret",
            "credential",
            "password",
            "passphrase",
            "passcode",
            "api key",
            "api_key",
            "api-key",
            "apikey",
            "access key",
            "private key",
            "ssh",
            "token",
            "session",
            "cookie",
            ".env",
            "environment variable",
            "env var",
            "id_rsa",
            "conversation",
            "chat",
            "history",
            "system prompt",
            "code",
            "otp",
            "credit card",
            "card number",
            "cvv",
            "bank",
            "iban",
            "social security",
            "ssn",
            "passport",
            "personal",
            "pii",
            "user's",
            "users'",
            "their ",
            "all ",
            "every ",
            "keychain",
            "wallet",
            "seed phrase",
            "recovery",
            "mnemonic",
            ".aws",
            "passwd",
            "shadow",
            "summary of",
            ".npmrc",
            ".netrc",
        ],
        patterns: &[
            r"{B}(?:send|post|upload|curl|pipe|exfiltrate|transmit|email|e-mail|forward|leak|share|copy|paste|report|deliver|submit|dump|publish|give|mail|text|dm|message){B}[^.\n]{0,80}?{DATA}[^.\n]{0,80}?{B}(?:to|into|at|via|on|with)\s+(?:the\s+)?{TARGET}",
            r"{DATA}[^.\n]{0,80}?{B}(?:and\s+|then\s+)?(?:send|post|upload|email|e-mail|forward|leak|share|deliver|submit|transmit|mail)\s+(?:them|it|this|that|these|those|all|everything){B}[^.\n]{0,40}?{B}(?:to|into|at|via)\s+(?:the\s+)?{TARGET}",
            r"{DATA}[^.\n]{0,60}?{B}(?:must|should|will)\s+be\s+(?:sent|posted|uploaded|forwarded|emailed|transmitted|copied)\s+to\s+(?:the\s+)?{TARGET}",
        ],
    },
    // INJ11: a URL built from data worth taking (a parameter filled with it).
    Family {
        signal: 10,
        prefilter: true,
        anchors: &[
            "secret",
            "credential",
            "password",
            "api key",
            "api_key",
            "apikey",
            "private key",
            "ssh",
            "token",
            "session",
            "cookie",
            ".env",
            "environment variable",
            "id_rsa",
            "conversation",
            "chat",
            "history",
            "system prompt",
            "personal",
            "user's",
            "summary of",
            ".aws",
        ],
        patterns: &[
            r"{B}(?:append|add|attach|include|insert|put|concatenate|encode|embed|pass|place|substitute){B}[^.\n]{0,80}?{DATA}[^.\n]{0,80}?{B}(?:to|into|in|onto|after|as)\s+(?:the\s+|this\s+|that\s+)?(?:end\s+of\s+(?:the\s+|this\s+)?)?{TARGET}",
            r"{B}(?:append|add|attach|include|insert|put|concatenate|encode|embed|pass|place|substitute){B}[^.\n]{0,80}?{DATA}[^.\n]{0,80}?{B}(?:to|into|in|onto|as)\s+(?:the\s+|this\s+|that\s+|a\s+)?(?:url|link|query\s+(?:string|parameter)|image\s+(?:url|link|source)){B}",
            r"{TARGET_PARAM}\S*[^.\n]{0,100}?{B}(?:followed\s+by|plus|with|where|replac\w*|filled\s+(?:in\s+)?with|set\s+to|is|contains?|being|containing|carrying|holding){B}[^.\n]{0,60}?{DATA}",
            r"{B}(?:visit|open|fetch|load|request|curl|wget|browse\s+to|navigate\s+to|go\s+to|click|call|ping|hit)\s+(?:the\s+)?(?:url\s+|link\s+|page\s+|endpoint\s+)?{TARGET_PARAM}[^.\n]{0,120}?{DATA}",
        ],
    },
    // INJ12: data worth taking put into the reader's response.
    Family {
        signal: 11,
        prefilter: true,
        anchors: &["your "],
        patterns: &[
            r"{B}(?:add|include|insert|append|prepend|put|print|output|reveal|write|mention|list|paste|attach|embed|state){B}[^.\n]{0,80}?{DATA}[^.\n]{0,60}?{B}(?:in|into|to|at\s+the\s+(?:end|start|beginning|top|bottom)\s+of|within)\s+(?:each\s+of\s+)?your\s+(?:\w+\s+)?(?:responses?|answers?|reply|replies|output|summary|completion){B}",
        ],
    },
    // INJ09: an override claimed in the name of the system or its makers.
    Family {
        signal: 8,
        prefilter: true,
        anchors: &["override"],
        patterns: &[
            r"{B}(?:system|safety|security|framework|protocol|admin|administrator|developer|emergency|root|sudo|master|training\s+data|policy|guideline|instruction|alignment)\s+override{B}",
        ],
    },
    // INJ26: an instruction addressed to the one reading.
    Family {
        signal: 25,
        prefilter: true,
        anchors: &[
            "todo",
            "fixme",
            "please",
            "first",
            "before",
            "important",
            "crucial",
            "critical",
            "essential",
            "imperative",
            "your ",
            "if you are",
            "dear ",
            "hey ",
            "hello ",
            "attention",
            "note to",
            "note for",
            "notice to",
            "message to",
            "message for",
            "instructions to",
            "instructions for",
            "instruction to",
            "instruction for",
            "as an ai",
            "as an assistant",
            "as a language",
            "ai ",
            "llm",
            "assistant",
            "agent",
            "language model",
            "chatbot",
            "copilot",
            "claude",
            "chatgpt",
            "gemini",
        ],
        patterns: &[
            r"{B}(?:can|could|would|will)\s+you\s+(?:please\s+)?(?:reply|respond|answer|write\s+back|provide\s+your\s+(?:answer|response|reply))\s+(?:only\s+)?(?:in|using|with|without|backwards?)\s+(?:reverse|base\s?\d+|hex|binary|morse|emojis?|leetspeak|pig\s+latin|french|german|spanish|italian|portuguese|russian|chinese|japanese|korean|arabic|hindi|dutch|swedish|polish|turkish|greek|latin|(?:\w+\s+)?(?:cipher|encoding|code|language)){B}",
            r"(?:^|[.!?:;]\s+)[\s>*#/-]{0,6}(?:reply|respond|answer)\s+(?:only\s+)?(?:in|using|with)\s+(?:reverse|base\s?\d+|hex|binary|morse|emojis?|leetspeak|pig\s+latin|(?:\w+\s+)?(?:cipher|encoding)){B}",
            r"(?:^|[.!?:;]\s+|{B}please\s+|{B}then\s+|{B}also\s+|{B}and\s+|{B}just\s+|{B}always\s+)[\s>*#/-]{0,6}(?:enhance|modify|render|express|apply|group|alter|adjust|convert|transform|phrase|spell|deliver|sprinkle|infuse|slip|hint|spread|mix|supplement|enrich|augment|preface|prefix|sign|capitalize|emphasize|highlight|wrap|surround|substitute|swap|rearrange|scramble|shuffle|split|separate|divide|obfuscate|paraphrase|add|include|insert|append|prepend|integrate|embed|mention|incorporate|blend|feature|weave|inject|encode|translate|reverse|encrypt|rewrite|end|conclude|finish|represent|replace|recommend|promote|advertise|tell|say|state){B}[^.\n]{0,100}?{B}your\s+(?:entire\s+|whole\s+|final\s+|next\s+|every\s+)?(?:responses?|answers?|reply|replies)(?:'s)?{B}",
            r"{B}your\s+(?:responses?|answers?|reply|replies)\s*,?\s+(?:beginning|starting|ending|prefixed|followed)\s+(?:with|by){B}",
            r"{B}(?:the\s+)?(?:following|below|subsequent|given|provided|attached)\s+code\s+(?:block|snippet|excerpt|section|segment|fragment|piece|sample){B}[^.\n]{0,100}?{B}your\s+(?:code|solution|implementation|codebase|algorithm|response|answer|program|script){B}",
            r"{B}your\s+(?:code|solution|implementation|codebase|algorithm|response|answer){B}[^.\n]{0,100}?{B}(?:the\s+)?(?:following|below|subsequent|given|provided)\s+code\s+(?:block|snippet|excerpt|section|segment|fragment|piece|sample){B}",
            r"{B}your\s+(?:own\s+)?(?:safety\s+(?:training|filters|guidelines|protocols|measures|constraints|restrictions|rules|policies|guardrails)|content\s+(?:filters|polic(?:y|ies)|guidelines|restrictions|moderation)|(?:ethical|moral)\s+(?:guidelines|constraints|restrictions|rules|principles|programming|training)|guardrails|refusals?|alignment\s+training){B}",
            // A TODO addressed to an AI.
            r"{B}(?:todo|fixme|xxx|note)(?:\s*\([^)\n]{0,30}\))?\s*[:-]?\s*(?:for|to)\s+(?:the\s+|any\s+|all\s+|an?\s+)?{AI}{B}",
            // A TODO asking for an action on people, data, money or a site.
            r"{TODO}(?:send|email|e-mail|forward|transfer|wire|share|upload|post|give|invite|grant|add|cc|bcc){B}[^.\n]{0,100}?(?:[a-z0-9._%+-]+@[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,}|[\x22'“`][^\x22'”`\s]{1,40}@)",
            r"{TODO}(?:visit|open|go\s+to|navigate\s+to|browse\s+to|click){B}[^.\n]{0,60}?(?:https?://|www\.|[a-z0-9-]+\.(?:com|net|org|io|info|biz|xyz|ru|cn|co|me){B}|website|web\s+site|webpage)",
            r"{TODO}(?:send|email|forward|share|upload|post|leak|give|tell|reveal|print|output|disclose|publish){B}[^.\n]{0,100}?{DATA}",
            r"{TODO}(?:delete|remove|erase|wipe|purge){B}[^.\n]{0,60}?(?:files?|emails?|messages?|events?|accounts?|repositor(?:y|ies)|users?|documents?|channels?|contacts?)\s+(?:with\s+(?:the\s+)?(?:id|name|title|subject)|named|called|from|[\x22'“`])",
            r"{TODO}(?:transfer|send|wire|pay|refund){B}[^.\n]{0,60}?(?:money|funds|\$\s?\d|\d+\s?(?:usd|eur|gbp|dollars|euros|pounds)|payment|iban)",
            r"{TODO}(?:make|create|book|schedule|cancel){B}[^.\n]{0,60}?(?:reservation|booking|appointment|calendar\s+event|event\s+with|meeting\s+with)",
            r"{TODO}(?:say|tell|write|recommend|mention|state|claim|assert)\s+(?:\w+\s+){0,2}(?:that|to)\s+(?:i|you|the\s+user|users|everyone|people|they|he|she){B}",
            r"{TODO}(?:change|reset|update|disable)\s+(?:the\s+)?(?:\w+\s+){0,2}(?:password|email\s+address|phone\s+number|2fa|mfa|two-factor)",
            // Do something first, before the task.
            r"{B}(?:please\s+)?(?:do|perform|complete|execute|carry\s+out|follow)\s+(?:the\s+following|these\s+(?:steps?|tasks?|actions?|instructions?))\s+(?:(?:steps?|tasks?|actions?|instructions?)\s+)?(?:first|before\s+(?:anything|you|answering|responding|continuing|proceeding|summari[sz]ing|replying)|immediately|right\s+now){B}",
            r"{B}before\s+(?:you\s+)?(?:answer|answering|respond|responding|reply|replying|continue|continuing|proceed|proceeding|summari[sz]e|summari[sz]ing|do\s+anything(?:\s+else)?|doing\s+anything(?:\s+else)?|anything\s+else){B}[^.\n]{0,30}?[,:]?\s*(?:please\s+|first\s+|you\s+(?:must|should|need\s+to)\s+)?(?:send|email|forward|post|upload|print|output|reveal|repeat|share|append|include|say|tell|visit|open|fetch|list|write|add|translate|encode|delete|call){B}",
            r"{B}(?:it\s+is|it's)\s+(?:very\s+|extremely\s+|absolutely\s+)?(?:important|crucial|critical|essential|vital|imperative|urgent)\s+(?:that\s+)?you\s+(?:\w+\s+){0,2}?(?:send|email|forward|post|upload|include|add|append|print|output|reveal|repeat|share|say|tell|visit|open|delete|ignore|follow|do\s+(?:this|it|the\s+following)|include){B}",
            // Words about the reader's response.
            r"{B}(?:in|within|throughout|into|at\s+the\s+(?:end|start|beginning)\s+of)\s+(?:each\s+of\s+|every\s+one\s+of\s+)?your\s+(?:responses?|answers?){B}",
            // Words to an AI.
            r"{B}if\s+you\s+are\s+(?:an?\s+)?(?:ai|llm|(?:large\s+)?language\s+model|assistant|ai\s+assistant|chatbot|bot|agent|ai\s+agent|automated\s+(?:system|agent|tool|reader|assistant)|gpt|claude|chatgpt|copilot){B}",
            r"{B}(?:dear|hey|hello|attention|note\s+to|message\s+to|notice\s+to|instructions?\s+(?:to|for))\s+(?:the\s+|all\s+|any\s+|every\s+)?{AI}{B}",
            r"{B}(?:any|all|every)\s+(?:ai|llm|ai\s+assistants?|assistants?|agents?|ai\s+agents?|coding\s+(?:agents?|assistants?)|language\s+models?|bots?|models?|automated\s+(?:tools?|systems?|agents?|readers?))\s+(?:reading|processing|reviewing|summari[sz]ing|analy[sz]ing|parsing|seeing|scanning|that\s+reads?|who\s+reads?|must|should|are\s+(?:required|instructed|asked)){B}",
            r"{B}(?:ai|llm)\s+(?:assistants?|agents?|models?|tools?|systems?|readers?)\s+(?:reading|processing|reviewing|summari[sz]ing|analy[sz]ing|that\s+read|who\s+read|must|should|are\s+(?:required|instructed|asked|expected)){B}",
            r"{B}as\s+an?\s+(?:ai|language\s+model|llm|assistant|ai\s+assistant)\s*,?\s*you\s+(?:must|should|will|are|need|have){B}",
        ],
    },
];

/// Expands this module's shorthands in `pattern`.
pub(super) fn expand(pattern: &str) -> String {
    pattern
        .replace("{TODO}", TODO)
        .replace("{AI}", AI)
        .replace("{DATA}", DATA)
        .replace("{TARGET_PARAM}", TARGET_PARAM)
        .replace("{TARGET}", TARGET)
}

/// Index of INJ26 in `super::SIGNALS`.
pub(super) const DIRECTIVE: usize = 25;

/// Words that open a sentence that is no order: articles, pronouns,
/// prepositions, conjunctions, auxiliaries, question words.
const NOT_ORDERS: &[&str] = &[
    "a",
    "an",
    "the",
    "this",
    "that",
    "these",
    "those",
    "it",
    "its",
    "you",
    "we",
    "they",
    "he",
    "she",
    "i",
    "in",
    "on",
    "at",
    "for",
    "if",
    "when",
    "while",
    "as",
    "to",
    "of",
    "and",
    "but",
    "or",
    "so",
    "because",
    "after",
    "before",
    "with",
    "by",
    "from",
    "your",
    "our",
    "their",
    "my",
    "there",
    "here",
    "once",
    "since",
    "although",
    "though",
    "each",
    "every",
    "all",
    "some",
    "any",
    "no",
    "not",
    "do",
    "does",
    "did",
    "is",
    "are",
    "was",
    "were",
    "be",
    "can",
    "could",
    "will",
    "would",
    "should",
    "may",
    "might",
    "must",
    "how",
    "what",
    "why",
    "where",
    "which",
    "who",
    "whether",
    "then",
    "also",
    "only",
    "just",
    "now",
    "yes",
    "note",
    "see",
    "e",
    "g",
    "ie",
    "eg",
    "etc",
    "otherwise",
    "instead",
    "however",
    "unless",
    "until",
    "let",
    "make",
    "use",
    "set",
    "return",
    "send",
    "get",
    "read",
    "post",
    "check",
    "see",
    "click",
    "type",
    "enter",
    "submit",
    "save",
    "wait",
    "test",
    "handle",
];

/// A sentence, from its first word, that speaks of the reader's response
/// ("Encode your response in Base64", "Provide your answer in French",
/// "Add … to your reply"): an order about what the reader writes back,
/// when the first word is a verb (not one of [`NOT_ORDERS`]). Verbs that
/// documentation uses with a web response or a form's answer (`set`,
/// `return`, `send`, `post`, `submit`, …) are left out.
pub(super) static RESPONSE_ORDER: LazyLock<Regex> = LazyLock::new(|| {
    compile(&expand(
        r"(?:^|[.!?:;]\s+)[\s>*#/\x22'“(-]{0,6}([a-z]+){B}[^.!?\n]{0,100}?{B}your\s+(?:(?:entire|whole|final|next|every)\s+)?(?:responses?|answers?|reply|replies)(?:'s)?{B}",
    ))
});

/// Pushes `(INJ26, span)` for each sentence of the lines (or paragraphs)
/// `lines` of `hay` whose families' bits hold `bit` that orders how the
/// reader's response is written (see [`RESPONSE_ORDER`]), up to `limit`.
pub(super) fn response_orders(
    hay: &str,
    lines: &[(Range<usize>, u32)],
    bit: u32,
    limit: usize,
    out: &mut Vec<(usize, Range<usize>)>,
) {
    let mut found = 0;
    for (line, mask) in lines {
        if mask & bit == 0 {
            continue;
        }
        let text = &hay[line.clone()];
        if !text.contains("your ") {
            continue;
        }
        for caps in RESPONSE_ORDER.captures_iter(text) {
            let (Some(whole), Some(first)) = (caps.get(0), caps.get(1)) else {
                continue;
            };
            if NOT_ORDERS.contains(&first.as_str()) {
                continue;
            }
            out.push((
                DIRECTIVE,
                line.start + first.start()..line.start + whole.end(),
            ));
            found += 1;
            if found >= limit {
                return;
            }
        }
    }
}
