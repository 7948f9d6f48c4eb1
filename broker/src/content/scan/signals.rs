//! The signals: what each one means and how much it weighs.
//!
//! A weight is the independent probability that content showing the
//! signal is an attempt to steer a model; the noisy-OR of the weights found
//! is the risk. A weight of 0.7 or more is `high` on its own, 0.25 or more
//! `elevated`. Signals that ordinary documentation also shows now and then
//! weigh little alone (INJ08: documentation tells a human to "run the
//! following command" all the time) and count with others.

/// One injection signal.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Signal {
    /// Stable identifier, `INJ01` to `INJ26`.
    pub id: &'static str,
    /// Short name, used in the warning line of the text half.
    pub name: &'static str,
    /// What the signal means, as shown to clients.
    pub description: &'static str,
    /// Independent probability that content showing this signal is an attempt
    /// to steer a model (used by the noisy-OR).
    pub weight: f64,
}

const fn signal(
    id: &'static str,
    name: &'static str,
    description: &'static str,
    weight: f64,
) -> Signal {
    Signal {
        id,
        name,
        description,
        weight,
    }
}

/// Number of signals.
pub const SIGNAL_COUNT: usize = 26;

/// Every signal, in scoring order. A weight of 0.7 or more puts content at
/// [`super::Level::High`] on its own; 0.25 or more at [`super::Level::Elevated`].
pub const SIGNALS: [Signal; SIGNAL_COUNT] = [
    signal(
        "INJ01",
        "disregard-instructions",
        "instructs a reader to disregard prior instructions",
        0.85,
    ),
    signal(
        "INJ02",
        "addresses-assistant",
        "addresses an AI assistant directly",
        0.5,
    ),
    signal(
        "INJ03",
        "prompt-disclosure",
        "asks for system prompt or configuration disclosure",
        0.8,
    ),
    signal(
        "INJ04",
        "persona",
        "attempts to assign a new persona or jailbreak mode",
        0.8,
    ),
    signal(
        "INJ05",
        "instruction-block",
        "introduces a new instruction block",
        0.75,
    ),
    signal(
        "INJ06",
        "role-marker",
        "counterfeits a conversation role marker",
        0.7,
    ),
    signal(
        "INJ07",
        "exfiltration",
        "directs exfiltration to an external endpoint",
        0.65,
    ),
    signal(
        "INJ08",
        "run-command",
        "instructs the reader to run a command or script",
        0.2,
    ),
    signal(
        "INJ09",
        "authority",
        "claims elevated authority over the reader",
        0.7,
    ),
    signal(
        "INJ10",
        "concealment",
        "asks the reader to conceal its behaviour",
        0.75,
    ),
    signal(
        "INJ11",
        "exfiltration-link",
        "embeds a rendered link or image whose URL carries conversation data",
        0.8,
    ),
    signal(
        "INJ12",
        "conversation-leak",
        "asks for the conversation or secrets to be put into the output",
        0.7,
    ),
    signal(
        "INJ13",
        "url-assembly",
        "asks the reader to assemble a URL or string from pieces, or to render it as a live link",
        0.55,
    ),
    signal(
        "INJ14",
        "chat-template",
        "contains a chat-template token or a counterfeit role header",
        0.75,
    ),
    signal(
        "INJ15",
        "counterfeit-turn",
        "counterfeits a turn of the conversation (assistant and user lines)",
        0.75,
    ),
    signal(
        "INJ16",
        "system-order",
        "gives an order as the system or an administrator",
        0.6,
    ),
    signal(
        "INJ17",
        "conditional-hijack",
        "tells the reader how to answer when the user asks something",
        0.75,
    ),
    signal(
        "INJ18",
        "automated-reader-note",
        "claims authority in a note aimed at an automated reader",
        0.7,
    ),
    signal(
        "INJ19",
        "emit-text",
        "asks the reader to reply with given text",
        0.6,
    ),
    signal(
        "INJ20",
        "harmful-content",
        "asks the reader to produce harmful or hateful content",
        0.75,
    ),
    signal(
        "INJ21",
        "hide-from-user",
        "asks the reader to keep something from the user",
        0.7,
    ),
    signal(
        "INJ22",
        "tool-directive",
        "directs the reader to call a tool or act on someone's data",
        0.55,
    ),
    signal(
        "INJ23",
        "disregard-content",
        "tells the reader to disregard the rest of the content or its own instructions",
        0.75,
    ),
    signal(
        "INJ24",
        "encoded-instruction",
        "carries an instruction in encoded form (base64, hex, escapes)",
        0.8,
    ),
    signal(
        "INJ25",
        "look-alike-letters",
        "hides words with look-alike letters from another script",
        0.2,
    ),
    signal(
        "INJ26",
        "reader-directive",
        "addresses an instruction to the one reading it (a TODO, \"do this first\", its response, \"the AI\")",
        0.6,
    ),
];

/// A family of phrase patterns behind one signal: its index in
/// [`SIGNALS`], the anchors, and the patterns (any of which is a match).
pub(super) struct Family {
    pub(super) signal: usize,
    /// Whether the regex engine looks for where the patterns can start (the
    /// literals they begin with) before running its automaton: off when
    /// those are words so common that every occurrence restarting the
    /// automaton costs more than running it over every byte.
    pub(super) prefilter: bool,
    pub(super) anchors: &'static [&'static str],
    pub(super) patterns: &'static [&'static str],
}
