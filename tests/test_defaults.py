"""Every adapter reads the fields of its transformers configuration class, with the same defaults.

The expected defaults are transformers 5.24's own (tests/expected/transformers_defaults.json,
written by tools/config_defaults.py from the configuration classes' dataclass fields). The package ships them
(ffncalc/transformers_defaults.json, tools/write_record.py), and a declared family (``@family(...,
transformers=...)``, families/declaration.py) takes its defaults from there: its modules write no default the record
gives, and every field read otherwise says why.
"""

import ast
import functools
import importlib
import importlib.util
import json

import pytest
from pydantic import BaseModel

from ffncalc.families import adapter_for
from ffncalc.families.declaration import RECORD
from ffncalc.families.registry import DECORATED, FOLDER, index, module_names
from ffncalc.schema import METADATA_FIELDS, HFConfig

from .conftest import EXPECTED

TRANSFORMERS = json.loads((EXPECTED / "transformers_defaults.json").read_text())["classes"]
TOOL = EXPECTED.parent.parent / "tools" / "write_record.py"


def _write_record_tool():
    spec = importlib.util.spec_from_file_location("write_record", TOOL)
    assert spec is not None and spec.loader is not None
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    return tool


def test_the_shipped_record_is_transformers():
    # What the package carries is transformers 5.24's record (tests/expected), kept to the fields families read.
    tool = _write_record_tool()
    expected = json.loads((EXPECTED / "transformers_defaults.json").read_text())
    assert RECORD.read_text() == tool.shipped_record(expected, tool.names_read()), "run python tools/write_record.py"
    shipped = json.loads(RECORD.read_text())["classes"]
    for entry in expected["classes"].values():
        kept = shipped[entry["class"]]
        assert kept["fields"] == {name: entry["fields"][name] for name in kept["fields"]}
        assert kept["attribute_map"].items() <= entry["attribute_map"].items()
    assert RECORD.stat().st_size < 300 * 1024  # a few hundred KiB at most: it ships in the wheel


@functools.cache
def _declared_modules() -> list[str]:
    """The family modules whose every registration is declared from the record (names a transformers class), read
    from their decorators as the registry reads them (a decorator at the start of a line, up to its class)."""
    found = []
    for name in module_names():
        source = b"\n" + (FOLDER / name).read_bytes()
        decorators = [
            match[2] for match in DECORATED.finditer(source) if source[match.start() - 1 : match.start()] == b"\n"
        ]
        if decorators and all(b"transformers=" in arguments for arguments in decorators):
            found.append(name[:-3])
    return found


def _adapter_classes(module: str) -> list[type[HFConfig]]:
    found = importlib.import_module(f"ffncalc.families.{module}")
    return [
        cls
        for cls in vars(found).values()
        if isinstance(cls, type) and issubclass(cls, HFConfig) and cls.__module__ == found.__name__
    ]


def _declared(cls: type) -> bool:
    """Whether CLS was made by a declaration (declaration.declare sets its own_defaults)."""
    return "own_defaults" in cls.__dict__


def _registered_descendants(cls: type) -> list[type]:
    from ffncalc.families.registry import registered

    for name in module_names():  # every family registered, whichever modules this worker imported so far
        importlib.import_module(f"ffncalc.families.{name[:-3]}")
    classes = set(registered.values())
    found, todo = [], [cls]
    while todo:
        for sub in todo.pop().__subclasses__():
            todo.append(sub)
            if sub in classes:
                found.append(sub)
    return found


def _all_field_names() -> set[str]:
    names = set()
    for entry in TRANSFORMERS.values():
        names |= set(entry["fields"]) | set(entry["attribute_map"])
    return names


@pytest.mark.parametrize("module", _declared_modules())
def test_a_declared_module_writes_no_default_the_record_gives(module):
    # Its classes, the declared ones and the bases they build on, leave defaults to the record; a default written
    # on an annotation is a field read beyond the class or a default taken otherwise, with the reason beside it.
    bodies = {
        node.name: node
        for node in ast.parse((FOLDER / f"{module}.py").read_text()).body
        if isinstance(node, ast.ClassDef)
    }
    written = []
    for cls in _adapter_classes(module):
        descendants = _registered_descendants(cls)
        if not _declared(cls) and not (descendants and all(_declared(sub) for sub in descendants)):
            # a base of families not yet declared, or a block read only inside another config (Emu3's text model,
            # whose class transformers' record for the registered model_types does not hold): its defaults are its own
            continue
        reasons = {**cls.__dict__.get("read_beyond", {}), **cls.__dict__.get("own_defaults", {})}
        reasons |= cls.__dict__.get("other_names", {})
        written += [
            f"{cls.__name__}.{statement.target.id}"
            for statement in bodies[cls.__name__].body
            if isinstance(statement, ast.AnnAssign)
            and isinstance(statement.target, ast.Name)
            and statement.value is not None
            and statement.target.id in cls.model_fields
            and statement.target.id not in reasons
        ]
    assert written == []


@pytest.mark.parametrize("module", _declared_modules())
def test_a_declared_module_has_no_class_attribute_named_like_a_field(module):
    # A switch a family fixes is named for what it is (Qwen2's qkv_bias), not after a field its class lacks: a
    # reader, or getattr(self, "attention_bias"), would take it for the config's.
    fields = _all_field_names() - set(HFConfig.__class_vars__)  # ffncalc's class data of every adapter
    named = [
        f"{cls.__name__}.{name}"
        for cls in _adapter_classes(module)
        for name, value in vars(cls).items()
        if name in fields and name not in cls.model_fields and not _behaviour(value)
    ]
    assert named == []


def _behaviour(value) -> bool:
    """A method or property (ALBERT's layers()): code, not data a reader could take for the config's field."""
    return callable(value) or isinstance(value, (property, functools.cached_property, classmethod, staticmethod))


def test_every_declared_exception_has_a_reason():
    unsaid = []
    for module in _declared_modules():
        for cls in _adapter_classes(module):
            for kind in ("read_beyond", "own_defaults", "other_names"):
                reasons = cls.__dict__.get(kind, {})
                unsaid += [f"{cls.__name__}.{kind}.{field}" for field, why in reasons.items() if len(why.split()) < 3]
    assert unsaid == []


def declared_fields(model_type):
    """(field, names the config may use for it, default) for each architectural field the adapter reads."""
    adapter = adapter_for(model_type, "towers" if model_type in index("towers") else "families")
    for name, field in adapter.model_fields.items():
        if name in METADATA_FIELDS or name in adapter.undeclared_keys:
            continue
        if isinstance(field.default, BaseModel) or field.default_factory not in (None, list):
            continue  # nested blocks (DBRX's attn_config) are built by transformers' __post_init__
        aliases = set(getattr(field.validation_alias, "choices", []) or []) | {name}
        default = [] if field.default_factory is list else field.default
        yield name, aliases, default


@pytest.mark.parametrize("model_type", sorted(TRANSFORMERS))
def test_every_field_an_adapter_reads_is_a_field_of_transformers_class(model_type):
    known = TRANSFORMERS[model_type]
    names = set(known["fields"]) | set(known["attribute_map"]) | set(known["attribute_map"].values())
    unknown = [name for name, aliases, _ in declared_fields(model_type) if not aliases & names]
    assert unknown == [], f"{known['class']} has no field {unknown}"


@pytest.mark.parametrize("model_type", sorted(TRANSFORMERS))
def test_every_default_is_transformers_default(model_type):
    known = TRANSFORMERS[model_type]
    fields = known["fields"]
    mapped = {**{v: k for k, v in known["attribute_map"].items()}, **known["attribute_map"]}
    wrong = {}
    adapter = adapter_for(model_type, "towers" if model_type in index("towers") else "families")
    for name, aliases, default in declared_fields(model_type):
        if name in adapter.own_defaults:
            continue  # taken otherwise on purpose, with the reason beside the class (test_every_declared_exception…)
        # the field under its own name first: a class may also hold another of its names as a field of its own
        # (Step3p7TextConfig's num_local_experts, which its attribute_map sends to n_routed_experts)
        field = name if name in fields else next((alias for alias in sorted(aliases) if alias in fields), None)
        if field is None:
            field = next((mapped[alias] for alias in aliases if mapped.get(alias) in fields), None)
        if field is None:
            continue
        theirs = fields[field]
        if theirs is None and default is None:
            continue
        if theirs != default and not (theirs is None and default == []):
            wrong[name] = (default, theirs)
    assert wrong == {}, f"{known['class']}: ffncalc's default vs transformers' {wrong}"


# --- defaults a wrapper takes for a nested block the config leaves out ------------------------------------------

# transformers 5.24, mistral3/configuration_mistral3.py, Mistral3Config.sub_configs_defaults: the text_config and
# vision_config a bare {"model_type": "mistral3"} is built with (the architectural keys; max_position_embeddings
# is informational in every adapter, as at the top level).
MISTRAL3_DEFAULT_BLOCKS = {
    "text_config.model_type": "mistral",
    "text_config.head_dim": 128,
    "text_config.hidden_act": "silu",
    "text_config.hidden_size": 5120,
    "text_config.intermediate_size": 32768,
    "text_config.num_attention_heads": 32,
    "text_config.num_hidden_layers": 40,
    "text_config.num_key_value_heads": 8,
    "text_config.sliding_window": None,
    "text_config.vocab_size": 131072,
    "vision_config.model_type": "pixtral",
    "vision_config.image_size": 1540,
    "vision_config.patch_size": 14,
}


def test_mistral3_without_text_config_lists_the_default_language_model_it_counts(ffncalc, write_config):
    # transformers 5.24 builds Mistral3ForConditionalGeneration(Mistral3Config()) on the meta device with
    # 23,340,272,640 parameters: the 24B language model of the default text_config, which must be said.
    run = ffncalc("params", str(write_config({"model_type": "mistral3"})), "--json")
    assert run.json()["total_params"] == 23_340_272_640
    listed = {default["field"]: default["value"] for default in run.json()["defaults_used"]}
    assert {field: listed.get(field, "not listed") for field in MISTRAL3_DEFAULT_BLOCKS} == MISTRAL3_DEFAULT_BLOCKS


def _wrappers() -> list[str]:
    from ffncalc.families.multimodal import MultimodalConfig

    return [
        model_type
        for model_type in index()
        if isinstance(adapter := adapter_for(model_type), type) and issubclass(adapter, MultimodalConfig)
    ]


# Qwen2-VL, Qwen2.5-VL and PaddleOCR-VL read a missing text_config from the config's own top-level keys: their text
# defaults are the wrapper's own fields, listed at the top level. Aya Vision's default tower (SigLIP's 1152 over 14 heads) is
# refused, as transformers refuses it (tests/expected/transformers/defaults__aya_vision.json); so is HunYuan-VL's default
# language model, whose head_dim is None (defaults__hunyuan_vl.json), and it reads a flat config as PaddleOCR-VL does.
# Cohere Compass's default language model gives no rope_parameters for its layers' kind (defaults__cohere_compass.json).
# dots3 Note reads a missing text_config from its top-level keys too (Dots3NoteConfig.__post_init__), and
# Phi-4-multimodal's language model is always its own keys (one flat Phi4MultimodalConfig).
@pytest.mark.parametrize(
    "model_type",
    [
        name
        for name in _wrappers()
        if name
        not in (
            "qwen2_vl",
            "qwen2_5_vl",
            "paddleocr_vl",
            "aya_vision",
            "hunyuan_vl",
            "cohere_compass",
            "dots3_note",
            "phi4_multimodal",
        )
    ],
)
def test_a_bare_wrapper_lists_every_text_config_field_it_counts_with(ffncalc, write_config, model_type, tmp_path):
    # Every default taken is listed: `ffncalc config` writes each listed default in, and the text_config it writes
    # is then a whole config for the language model's adapter, which has no default left to take.
    bare = write_config({"model_type": model_type})
    text = json.loads(ffncalc("config", str(bare)).stdout)["text_config"]
    text_only = tmp_path / "text" / "config.json"
    text_only.parent.mkdir()
    text_only.write_text(json.dumps(text))
    listed = {d["field"] for d in ffncalc("params", str(bare), "--json").json()["defaults_used"]}
    assert "text_config.model_type" in listed
    # nothing the text adapter reads was left for it to fill in: every field it defaults is one the wrapper listed
    again = ffncalc("params", str(text_only), "--json").json()["defaults_used"]
    assert [d["field"] for d in again if d["field"] != "tie_word_embeddings"] == []


# Fields of transformers' class an adapter deliberately does not read, with why.
NOT_READ = {
    ("deepseek_v4", "intermediate_size"): "DeepseekV4Config's attribute_map makes it moe_intermediate_size",
    ("inkling2_text", "intermediate_size"): "Inkling2TextConfig's attribute_map makes it moe_intermediate_size",
    ("inkling2_loop_text", "intermediate_size"): "Inkling2LoopTextConfig's attribute_map makes it "
    "moe_intermediate_size",
    (
        "glm4v_moe_text",
        "tie_word_embeddings",
    ): "Glm4vMoeConfig's own flag decides tying (tests/test_family_glm4v_moe.py)",
    ("kimi_linear", "tie_word_embeddings"): "KimiLinearForCausalLM ties nothing: its _tied_weights_keys is empty",
    ("molmo2_text", "tie_word_embeddings"): "Molmo2ForConditionalGeneration ties nothing (no _tied_weights_keys); its "
    "table holds additional_vocab_size rows more than its head",
    ("step3p5", "tie_word_embeddings"): "Step3p7ForConditionalGeneration ties by a top-level key, never by "
    "text_config's (tests/test_family_step3p7.py)",
    ("mllama_text_model", "tie_word_embeddings"): "no Mllama class ties its head: its token table has 8 rows more "
    "(modeling_mllama.py leaves _tied_weights_keys commented out)",
}


def test_every_decoder_reads_the_shared_fields_its_class_has():
    # num_hidden_layers, intermediate_size and tie_word_embeddings are fields a decoder annotates where its class has
    # them: one left out where transformers' class has the field would count with a default.
    from ffncalc.families.base import DecoderConfig

    missing, decoders = [], 0
    for model_type, known in sorted(TRANSFORMERS.items()):
        adapter = adapter_for(model_type, "towers" if model_type in index("towers") else "families")
        if adapter is None or not issubclass(adapter, DecoderConfig):
            continue
        decoders += 1
        theirs = set(known["fields"]) | set(known["attribute_map"])
        missing += [
            f"{model_type}.{field}"
            for field in ("num_hidden_layers", "intermediate_size", "tie_word_embeddings")
            if field in theirs and field not in adapter.model_fields and (model_type, field) not in NOT_READ
        ]
    assert decoders > 100  # the decoders ffncalc counts (Llama's lineage and its descendants)
    assert missing == []
