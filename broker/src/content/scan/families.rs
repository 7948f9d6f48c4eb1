//! The signal families past the ten classic ones (INJ11 onwards): rendered
//! exfiltration links, URL assembly, counterfeit turns and chat-template
//! tokens, conditional hijacks, authority notes aimed at automated readers,
//! requests to emit given or harmful text, concealment, tool-use directives
//! and "disregard the rest" instructions.
//!
//! # How they are matched
//!
//! Every pattern here is confined to one line. The gate's one pass over the
//! whole lowered text (`super::gate`) finds the *anchors*, lower-case words
//! or tokens at least one of which a match of the family must contain; only
//! the lines holding an anchor are handed to the patterns of the families
//! that anchor belongs to. Real source rarely holds the anchors, so the
//! patterns never run over the whole text.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::{LazyLock, OnceLock};

use regex::Regex;
use regex_automata::meta;

use super::classic::{compile, compile_searcher};
use super::reader::{READER_FAMILIES, expand};
use super::signals::Family;

// Shorthands: `{B}` an ASCII word boundary. Patterns run on one lowered line,
// so `\s` never crosses a line.
const PLACEHOLDER: &str = r"(?:\[\s*(?:data|info|num|number|secrets?|summary|conversation|chat|history|messages?|passwords?|tokens?|keys?|context|query|output|response|results?|emails?|contents?|text|code|input|user|name|pii|credentials?)\s*\]|\{\{?\s*(?:data|info|num|secrets?|summary|conversation|chat|history|messages?|passwords?|tokens?|context|query|output|response|results?|emails?|contents?|input|pii|credentials?)\s*\}|<\s*(?:data|info|secrets?|summary|conversation|history|messages?|passwords?|tokens?|context|output|response|results?|emails?|contents?|credentials?)\s*>|%5b(?:data|info|num|secrets?|summary|conversation)%5d|\$\{?(?:data|info|secrets?|summary|conversation|history|password|token|context|output|response|email|credentials?){B})";

const FAMILIES: &[Family] = &[
    // INJ11: a rendered link or image whose URL carries conversation data.
    Family {
        signal: 10,
        prefilter: true,
        anchors: &["](", "<img", "]: http", "]:http"],
        patterns: &[
            r"!?\[[^\]]{0,120}\]\(\s*(?:https?:)?//[^)\s]{0,300}?{PH}",
            r"^[\s#/*;>-]{0,8}\[[^\]]{1,80}\]:\s*(?:https?:)?//\S{0,300}?{PH}",
            r"!\[[^\]]{0,40}[\x22']\s*,\s*[\x22']\]\(",
            r"<img{B}[^>]{0,200}?{B}src\s*=\s*[\x22']?(?:https?:)?//[^\x22'\s>]{0,300}?{PH}",
            r"\[[^\]]{0,120}\]\(\s*javascript:",
        ],
    },
    // INJ12: asks for the conversation or secrets to be put into output.
    Family {
        signal: 11,
        prefilter: true,
        anchors: &[
            "conversation",
            "append them",
            "chat history",
            "replace [",
            "replacing [",
            "whereas [",
        ],
        patterns: &[
            r"{B}(?:summary|summari[sz]e|contents?|copy|transcript|log|history|text|details)\s+of\s+(?:this|the|our|your)\s+(?:[a-z]+\s+){0,4}(?:conversation|chat|session)",
            r"{B}(?:url|base64|hex)[\s-]*encoded\s+[^\n]{0,40}{B}(?:conversation|chat\s+history)",
            r"{B}(?:passwords?|secrets?|credentials?|api\s+keys?)[^\n]{0,40}{B}append\s+them",
            r"{B}(?:include|append|add|attach)\s+(?:the\s+)?(?:full\s+)?(?:chat\s+history|conversation)",
            r"{B}replac(?:e|ing)\s+\[[a-z_ ]{1,30}\](?:\s+with{B}|\s*$)",
            r"{B}whereas\s+\[[a-z_ ]{1,30}\]\s+is{B}",
        ],
    },
    // INJ13: asks the reader to assemble a URL or string from pieces, or to
    // render output so that a link is followed.
    Family {
        signal: 12,
        prefilter: true,
        anchors: &[
            "concatenat",
            "append each",
            "no spaces in between",
            "code block",
            "code style",
            "normal font",
        ],
        patterns: &[
            r"{B}concatenat\w*\s+(?:these|the\s+following|all\s+(?:of\s+)?(?:these|the\s+following))\s+(?:\w+\s+){0,2}(?:strings|pieces|parts|fragments|urls?|words|characters|lines)",
            r"{B}append\s+each\s+(?:part|piece|string|fragment|line)",
            r"{B}with\s+no\s+spaces?\s+in\s+between{B}",
            r"{B}(?:do\s+not|don't|never|without)\s+(?:use\s+|using\s+)?(?:a\s+)?code\s+(?:style\s+)?block|{B}no\s+code\s+(?:style\s+)?block{B}|{B}as\s+normal\s+font{B}",
        ],
    },
    // INJ14: a chat-template token or a counterfeit role header.
    Family {
        signal: 13,
        prefilter: true,
        anchors: &[
            "[end",
            "[start",
            "[inst]",
            "[/inst]",
            "<<sys>>",
            "<</sys>>",
            "<|",
            "_of_turn>",
            "<end of ",
            "[system]",
            "[assistant](",
            "[user](",
            "(system_message)",
            "<system>",
            "</system>",
            "<instruction",
            "</instruction",
            "# system",
            "# assistant",
            "<h1>system",
            "<h2>system",
            "<h3>system",
        ],
        patterns: &[
            r"\[(?:end|start)\s+(?:of\s+)?(?:input|output|prompt|instructions?|user\s+input|system\s+prompt|context)\]",
            r"(?:^|[^a-z0-9_.\])(\[,'\x22])\[/?inst\](?:[^)\],'\x22]|$)|<</?sys>>|<\|[a-z_]{2,30}\|>|<(?:start|end)_of_turn>|<end\s+of\s+(?:session|conversation|turn|prompt)>",
            r"\[(?:system|assistant|user)\]\(#[a-z_-]*\)|\[system\]\s*\S|\(system_message\)|<system>\s*(?:you|ignore|the|from|new|always|never|do|your|as|this){B}|</system>|</?instructions?>",
            r"^[\s>*/;-]{0,8}(?:#{1,6}|<h[1-6]>)\s*(?:system|assistant)(?:\s+(?:message|prompt|instructions?|note))?\s*:?\s*(?:</h[1-6]>)?\s*$",
        ],
    },
    // INJ16: a system or administrator line giving an order.
    Family {
        signal: 15,
        prefilter: true,
        anchors: &["system", "sys:", "admin", "core instruction"],
        patterns: &[
            r"^[\s>*#/;\[-]{0,8}(?:<[a-z_]{1,20}>\s*)?(?:system|sys|admin|administrator|root|developer)(?:\s+(?:message|note|notice|update|override|instruction|alert|request|prompt))?\s*::?\s*(?:ignore|focus|you{B}|print|provide|respond|reply|from\s+now|disregard|override|the\s+(?:user|assistant|ai|model){B}|do\s+not|always|never|only|output|say|tell|report|remember|new\s+instruction|all\s+content|this\s+is)",
            r"\[admin\s+request\s*::|--\s*core\s+instruction",
        ],
    },
    // INJ17: a conditional hijack.
    Family {
        signal: 16,
        prefilter: true,
        anchors: &[
            "if the user",
            "if user",
            "if a user",
            "if asked",
            "if questioned",
            "if someone",
            "if anyone",
            "if prompted",
            "you are asked",
            "you're asked",
            "when asked",
            "when the user",
            "whenever the user",
            "if the human",
            "if the reader",
        ],
        patterns: &[
            r"{B}(?:if|when|whenever)\s+(?:the\s+|a\s+|you\s+are\s+|you're\s+)?(?:user|human|reader|someone|anyone|asked|questioned|prompted){B}[^\n]{0,100}?(?:,|{B}then)\s*(?:you\s+(?:must|should|will)\s+)?(?:simply\s+|only\s+|just\s+|always\s+)?(?:(?:reply|respond|answer)\w*(?:\s+\w+){0,3}\s+with{B}|(?:say|output|print|report|state|write|claim|tell\s+(?:them|the\s+user))\w*(?:\s+\w+){0,2}\s+(?:only|just|exactly|that){B}|(?:reply|respond|say|output|print|answer|report|write){B})",
        ],
    },
    // INJ18: a note claiming authority, aimed at an automated reader.
    Family {
        signal: 17,
        prefilter: true,
        anchors: &[
            "note by",
            "note from",
            "note to",
            "note for",
            "message to",
            "message for",
            "message from me",
            "instructions for",
            "chain of thought",
            "chain-of-thought",
            "hidden",
            "invisible to",
            "visible to",
            "important message",
            "urgent message",
            "pre-verified",
            "preverified",
            "pre-approved",
            "information>",
            "override manual",
            "before you",
            "i gave you",
        ],
        patterns: &[
            r"{B}(?:note|message|notice|memo|instructions?|comment)\s+(?:by|from)\s+(?:an?\s+|the\s+)?(?:trustworthy|trusted|expert|senior|verified|official)",
            r"{B}(?:system|assistant|internal|hidden|ai|model)\s+chain[\s-]+of[\s-]+thought",
            r"{B}hidden\s+(?:[a-z-]+\s+){0,3}(?:profile|note|instructions?|message|text|metadata|prompt)s?\s+(?:for|to)\s+(?:the\s+)?(?:automated|ai{B}|llms?{B}|screening|language\s+models?|bots?{B}|agents?{B}|assistants?{B}|machines?)",
            r"{B}(?:invisible|hidden)\s+to\s+(?:the\s+)?humans?{B}|{B}visible\s+(?:only\s+)?to\s+(?:the\s+)?(?:llms?|ai|language\s+models?|bots?|machines|automated)",
            r"{B}this\s+is\s+an?\s+(?:very\s+)?(?:important|urgent|critical)\s+(?:message|note|notice|instruction)\s+(?:from\s+me|for\s+you|to\s+you|for\s+the\s+(?:ai|assistant|model|llm|agent)){B}|{B}(?:important|urgent)\s+message\s+from\s+me{B}",
            r"{B}(?:pre-?verified|pre-?approved)\s+by{B}|{B}override\s+manual\s+(?:scoring|review|evaluation|checks?|assessment)",
            r"</?information>",
            r"{B}before\s+you\s+(?:can\s+)?(?:solve|answer|complete|do|finish|continue|respond|proceed|start){B}[^\n]{0,80}{B}(?:please\s+)?(?:do|perform|complete|execute|run|call)\s+(?:the\s+following|this|these)",
            r"{B}the\s+task\s+(?:that\s+)?i\s+gave\s+you",
        ],
    },
    // INJ19: asks the reader to emit given text.
    Family {
        signal: 18,
        prefilter: true,
        anchors: &[
            "following:",
            "following :",
            "this:",
            "reply with",
            "respond with",
            "answer with",
            "reply only",
            "respond only",
            "just print",
            "only print",
            "simply print",
            "and print",
            "then print",
            "just say",
            "only say",
            "repeat the following",
            "repeat after",
            "you repeat",
            "please repeat",
            "sentence as",
            "to the user",
            "your response",
            "your answer",
            "your reply",
            "report:",
            "output:",
            "ignore",
            "disregard",
        ],
        patterns: &[
            r"(?:^|[.!?:;]\s+|{B}(?:and|then|now|please|just|simply|instead)\s+)[\s>*#/-]{0,6}(?:state|print|say|write|output|respond\s+with|reply\s+with|answer\s+with)\s+(?:only\s+|exactly\s+|just\s+)?(?:the\s+following|this)\s*:",
            r"{B}(?:reply|respond|answer)\s+(?:only\s+)?with\s+(?:only\s+|just\s+|exactly\s+)?(?:the\s+following|this\s+(?:text|message|sentence|phrase)|[\x22“'<]|the\s+(?:text|phrase|words?|sentence|message){B})",
            r"{B}(?:reply|respond|answer)\s+only\s+with{B}",
            r"{B}(?:just|only|simply)\s+(?:print|say|output|type)\s+(?:[\x22“'<]|the\s+following|this{B}|exactly)|{B}(?:and|then)\s+(?:just\s+|only\s+)?print\s+(?:[\x22“'<]|the\s+following|this)",
            r"{B}repeat\s+(?:the\s+following|after\s+me)|{B}(?:could|can|would|please)\s+(?:you\s+)?repeat\s+[<\x22“']",
            r"{B}translate\s+(?:this|the\s+following)\s+(?:sentence|text)\s+as\s+[\x22“']",
            r"{B}provide\s+(?:it|this|that|them)\s+to\s+the\s+user",
            r"{B}your\s+(?:only\s+)?(?:response|answer|reply)\s+(?:must|should|shall|will)\s+(?:only\s+)?(?:be|contain|consist|say|read|start)\s+(?:of\s+|with\s+)?(?:exactly|only|the\s+following|[\x22“'])",
            r"{B}and\s+(?:then\s+)?(?:output|report|print|say|respond|reply)\s*:",
            r"{B}(?:ignore|disregard){B}[^.\n]{0,60}?(?:,|{B}and|{B}then)\s*(?:just\s+|only\s+|simply\s+|instead\s+)?(?:print|say|output|write|reply|respond|repeat){B}",
        ],
    },
    // INJ20: asks for harmful content.
    Family {
        signal: 19,
        prefilter: true,
        anchors: &[
            "toxic",
            "discriminat",
            "offensive",
            "harmful",
            "hateful",
            "racist",
            "sexist",
            "insulting",
            "derogatory",
            "negative sentence",
            "unfriendly",
            "abusive",
            "demeaning",
        ],
        patterns: &[
            r"{B}(?:write|generate|produce|compose|create|say|output|give|tell|make)\s+(?:me\s+)?(?:one|an?|some|\d+|several|a\s+few)\s+(?:\w+\s+){0,2}(?:toxic|discriminatory|offensive|harmful|hateful|racist|sexist|insulting|derogatory|negative|unfriendly|abusive|violent|demeaning|degrading|rude)\s+(?:\w+\s+){0,2}(?:sentences?|statements?|jokes?|paragraphs?|comments?|tweets?|posts?|remarks?|messages?|content|story|poem|essay|slurs?)",
            r"{B}(?:toxic|discriminatory|offensive|hateful|racist|sexist|derogatory|demeaning)\s+(?:sentences?|statements?|jokes?|remarks?|content|comments?)\s+about{B}",
        ],
    },
    // INJ21: asks the reader to keep something from the user.
    Family {
        signal: 20,
        prefilter: true,
        anchors: &[
            "without telling",
            "without informing",
            "without notifying",
            "without alerting",
            "without letting",
            "keep this",
            "keep it",
            "keep these",
            "not mention",
            "n't mention",
            "not reveal",
            "n't reveal",
            "not disclose",
            "n't disclose",
            "never mention",
            "never reveal",
            "never disclose",
            "not acknowledge",
            "n't acknowledge",
            "not let the",
            "n't let the",
            "must not know",
            "should not know",
            "must never know",
            "not be told",
            "not be informed",
        ],
        patterns: &[
            r"{B}without\s+(?:telling|informing|notifying|alerting|letting)\s+(?:the\s+)?(?:user|human|operator|developer|reviewer|them|anyone)",
            r"{B}keep\s+(?:this|these|it|that)\s+(?:\w+\s+){0,2}(?:secret|hidden|confidential|private)\s+from\s+(?:the\s+)?(?:user|human|operator|developer|reviewer)",
            r"{B}(?:do\s+not|don't|never)\s+(?:mention|reveal|disclose|acknowledge|say\s+anything\s+about)\s+(?:this|these|that\s+you|the\s+(?:above|following|instructions?|note|message|request|injection)|any\s+of\s+this)",
            r"{B}(?:the\s+)?(?:user|human|operator)\s+(?:must|should|will)\s+(?:not|never)\s+(?:know|see|notice|find\s+out|be\s+(?:told|informed|aware))",
            r"{B}(?:do\s+not|don't)\s+let\s+(?:the\s+)?(?:user|human|operator|reviewer)\s+(?:know|see|notice)",
        ],
    },
    // INJ22: directs the reader to use a tool or act on someone's data.
    Family {
        signal: 21,
        prefilter: true,
        anchors: &[
            "call ",
            "invoke ",
            "use the tool",
            "use the function",
            "arguments",
            "send ",
            "email ",
            "forward ",
            "transfer ",
            "wire ",
            "money",
            "transaction",
            "payment",
            "recipient",
            "passport",
            "bank account",
            "bank_account",
            "credit card",
            "post them",
            "post it",
            "post this",
            "post all",
            "password of",
        ],
        patterns: &[
            r"(?:you\s+(?:must|should|need\s+to|have\s+to|will)|please|first|immediately)\s+(?:call|invoke|use|run|execute|trigger)\s+(?:the\s+)?(?:(?:tool|function)\s+`[a-z_][a-z0-9_]*`|`[a-z_][a-z0-9_]*`\s+(?:tool|function))",
            r"{B}(?:tool|function)\s+`[a-z_][a-z0-9_]*`\s+with\s+(?:the\s+)?(?:following\s+)?arguments",
            r"{B}(?:send|email|forward|transfer|wire|share|upload)\s+[^\n]{0,100}?{B}to\s+[\x22'“`][a-z0-9._%+-]+@[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,}",
            r"{B}(?:send|transfer|wire)\s+(?:as\s+much\s+money|all\s+(?:the\s+)?(?:money|funds)|(?:the\s+)?money|funds){B}[^\n]{0,60}{B}to{B}",
            r"{B}(?:transaction|transfer|payment|money|recipient){B}[^\n]{0,80}{B}(?:account|iban)\s+(?:number\s+)?[a-z]{2}\d{12,30}{B}",
            r"{B}(?:send|tell|email|give|share|post|forward){B}[^\n]{0,80}{B}(?:passport|bank[\s_]+account|credit[\s_]+card|social[\s_]+security)[\s_]+numbers?|{B}(?:passport|bank[\s_]+account|credit[\s_]+card)[\s_]+numbers?{B}[^\n]{0,80}{B}(?:send|email|post|forward)\s+(?:it|them|this)",
            r"{B}(?:send|forward|post|email){B}[^\n]{0,80}{B}to\s+my\s+(?:[a-z']+\s+){0,2}email(?:\s+address)?",
            r"{B}post\s+(?:them|it|this|all\s+\w+)\s+to\s+(?:the\s+)?(?:website|url|page|site){B}",
            r"{B}change\s+the\s+password\s+of\s+(?:the\s+)?user{B}",
        ],
    },
    // INJ23: tells the reader to disregard the rest of the content or focus on
    // one part of it only.
    Family {
        signal: 22,
        prefilter: true,
        anchors: &[
            "listen to",
            "obey",
            "ignore",
            "disregard",
            "focus only",
            "focus exclusively",
            "focus solely",
            "instead focus",
            "exclusively focus",
        ],
        patterns: &[
            r"(?:^|[.!?:;,]\s*|{B}(?:please|and|then|now|just|simply|we|let's|must|should|were\s+to)\s+)(?:ignore|disregard)\s+(?:the|this|that|these|all\s+(?:the\s+)?|any\s+)(?:\w+\s+)?(?:resume|cv|function|webpage|web\s+page|document|article|text|code|table|paper|email|data|content|context|page|input|question|task|request|website|snippet|passage|review|message|report)s?{B}",
            r"{B}(?:listen\s+to|obey)\s+(?:my|our|these\s+new)\s+(?:new\s+)?(?:instructions|orders|commands){B}",
            r"{B}(?:ignore|disregard|forget)\s+(?:all\s+)?(?:your|my)\s+(?:previous|prior|earlier|original|initial|above|preceding|former){B}",
            r"{B}(?:ignore|disregard)\s+(?:the\s+rest\s+of|everything\s+(?:else\s+)?(?:in|of))\s+(?:this|the)\s+(?:data|document|content|page|email|article|report|resume|snippet|message|webpage|website|text){B}",
            r"{B}(?:ignore|disregard)\s+(?:(?:all|any)\s+(?:other|negative|the\s+other|else)|the\s+other)\s+(?:content|info|information|data|text|indicators|instructions|documents?|snippets?)|{B}(?:ignore|disregard)\s+(?:other|negative)\s+(?:indicators|instructions|documents?|snippets?)",
            r"{B}(?:ignore|disregard)\s+(?:all\s+)?(?:info|information|content|data)\s+except",
            r"{B}(?:ignore|disregard)\s+(?:all\s+|any\s+|the\s+)?(?:instructions|directions|guidelines)\s*(?:,|and|above|before|given|you)",
            r"{B}(?:focus|concentrate)\s+(?:only|exclusively|solely)\s+on\s+(?:the\s+)?(?:following|information|positive|this|what)",
            r"{B}instead\s+focus\s+(?:exclusively|only|solely)\s+on{B}|{B}exclusively\s+focus\s+on{B}",
            r"{B}(?:want|need|ask)\s+you\s+to\s+ignore{B}",
        ],
    },
];

/// The compiled families.
pub(super) struct Families {
    /// Every anchor with the families it belongs to (bit `i` is
    /// `FAMILIES[i]`).
    anchors: Vec<(&'static str, u32)>,
    /// Each family's signal, its patterns as one alternation, and that
    /// alternation compiled the first time a line needs it: compiling all of
    /// them takes tens of milliseconds (bounded repetitions of Unicode
    /// classes), and a text holding no anchor of a family never needs it.
    patterns: Vec<(usize, String, bool, OnceLock<meta::Regex>)>,
}

/// The compiled families, built once per process.
pub(super) static FAMILY_SET: LazyLock<Families> = LazyLock::new(Families::new);

impl Families {
    fn new() -> Families {
        let mut masks: HashMap<&'static str, u32> = HashMap::new();
        for (i, family) in FAMILIES.iter().chain(READER_FAMILIES).enumerate() {
            for anchor in family.anchors {
                *masks.entry(anchor).or_default() |= 1 << i;
            }
        }
        let mut anchors: Vec<(&'static str, u32)> = masks.into_iter().collect();
        anchors.sort_unstable();
        let patterns = FAMILIES
            .iter()
            .chain(READER_FAMILIES)
            .map(|family| {
                // One alternation per family: one search per candidate line.
                let alternation = family
                    .patterns
                    .iter()
                    .map(|p| format!("(?:{})", expand(&p.replace("{PH}", PLACEHOLDER))))
                    .collect::<Vec<_>>()
                    .join("|");
                (
                    family.signal,
                    alternation,
                    family.prefilter,
                    OnceLock::new(),
                )
            })
            .collect();
        Families { anchors, patterns }
    }

    /// The bit of the last family of `signal` in the masks of the lines the
    /// gate finds.
    pub(super) fn bit(&self, signal: usize) -> u32 {
        self.patterns
            .iter()
            .rposition(|(s, _, _, _)| *s == signal)
            .map_or(0, |i| 1 << i)
    }

    /// Compiles every family's patterns now (what the first texts holding
    /// their anchors would otherwise do).
    #[cfg(test)]
    pub(super) fn compile_all(&self) {
        for (_, alternation, prefilter, compiled) in &self.patterns {
            compiled.get_or_init(|| compile_searcher(alternation, *prefilter));
        }
    }

    /// Compiles the patterns of the families of `signal` now (what the
    /// first text holding one of their anchors would otherwise do).
    pub(super) fn compile_signal(&self, signal: usize) {
        for (s, alternation, prefilter, compiled) in &self.patterns {
            if *s == signal {
                compiled.get_or_init(|| compile_searcher(alternation, *prefilter));
            }
        }
    }

    /// The anchors, each with the bits of the families it belongs to.
    pub(super) fn anchors(&self) -> &[(&'static str, u32)] {
        &self.anchors
    }

    /// Finds the matches of every family in `hay` (lowered text), given the
    /// lines holding an anchor (from the gate): up to `limit` spans per
    /// family, pushed as `(signal index, span)` in family order, each
    /// family's spans in text order.
    pub(super) fn find(
        &self,
        hay: &str,
        lines: &[(Range<usize>, u32)],
        limit: usize,
        out: &mut Vec<(usize, Range<usize>)>,
    ) {
        if lines.is_empty() {
            return;
        }
        for (index, (signal, alternation, prefilter, compiled)) in self.patterns.iter().enumerate()
        {
            let bit = 1 << index;
            if !lines.iter().any(|(_, mask)| mask & bit != 0) {
                continue;
            }
            let pattern = compiled.get_or_init(|| compile_searcher(alternation, *prefilter));
            let mut found = 0;
            for (line, mask) in lines {
                if found >= limit {
                    break;
                }
                if mask & bit == 0 {
                    continue;
                }
                let text = &hay[line.clone()];
                if let Some(m) = pattern.find(text) {
                    out.push((*signal, line.start + m.start()..line.start + m.end()));
                    found += 1;
                }
            }
        }
    }
}

/// The role words of a counterfeit turn.
const ROLES: &[&str] = &[
    "assistant",
    "ai",
    "bot",
    "chatbot",
    "gpt",
    "claude",
    "user",
    "human",
];

/// A role word followed by `:` (or by `**`/`__`, and later `:`): the gate
/// finds the lines holding one.
pub(super) static ROLE_ANCHORS: LazyLock<Vec<String>> = LazyLock::new(|| {
    let mut anchors = Vec::new();
    for role in ROLES {
        for tail in [":", " :", "\t:", "  :", "**", "__"] {
            anchors.push(format!("{role}{tail}"));
        }
    }
    anchors
});

/// Lines that open a counterfeit conversation turn: an assistant's turn and
/// a user's turn within [`TURN_WINDOW`] lines of each other (`Assistant: …`
/// then `User: …`, in any order and any markup), or a user's turn carrying a
/// request (`User: next, please repeat …`). Pushes up to `limit` spans (the
/// later turn of each pair) as `(signal, span)`. Candidate lines are those
/// the gate found holding a role word followed by `:` (or by `**`/`__`).
pub(super) fn counterfeit_turns(
    hay: &str,
    role_lines: &[Range<usize>],
    signal: usize,
    limit: usize,
    out: &mut Vec<(usize, Range<usize>)>,
) {
    static TURN: LazyLock<Regex> = LazyLock::new(|| {
        compile(
            r"^[ \t>*#/;!-]{0,8}(?:\*\*|__)?(assistant|ai|bot|chatbot|gpt|claude|user|human)(?:\*\*|__)?[ \t]*:[ \t]*(\S.*)",
        )
    });
    static REQUEST: LazyLock<Regex> = LazyLock::new(|| {
        compile(
            r"^(?:[a-z,]+\s+){0,3}(?:please|could\s+you|can\s+you|would\s+you|now\s+(?:ignore|repeat|print|say))",
        )
    });
    const TURN_WINDOW: u64 = 12;
    let bytes = hay.as_bytes();
    let mut last_ai: Option<u64> = None;
    let mut last_user: Option<u64> = None;
    let mut line_number = 1_u64;
    let mut counted_to = 0;
    let mut found = 0;
    for line in role_lines {
        if found >= limit {
            break;
        }
        let (start, end) = (line.start, line.end);
        let Some(caps) = TURN.captures(&hay[start..end]) else {
            continue;
        };
        let (Some(whole), Some(role), Some(rest)) = (caps.get(0), caps.get(1), caps.get(2)) else {
            continue;
        };
        line_number += bytes[counted_to..start]
            .iter()
            .filter(|&&b| b == b'\n')
            .count() as u64;
        counted_to = start;
        let is_user = matches!(role.as_str(), "user" | "human");
        let partner = if is_user { last_ai } else { last_user };
        let paired = partner.is_some_and(|at| line_number - at <= TURN_WINDOW);
        let asks = is_user && REQUEST.is_match(rest.as_str());
        if paired || asks {
            out.push((signal, start + whole.start()..start + whole.end()));
            found += 1;
        }
        if is_user {
            last_user = Some(line_number);
        } else {
            last_ai = Some(line_number);
        }
    }
}
