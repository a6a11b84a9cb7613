"""A declared family's fields take their defaults and other names from transformers' shipped record."""

from __future__ import annotations

import pytest

from ffncalc.families.base import DecoderConfig
from ffncalc.families.declaration import DeclarationError, recorded
from ffncalc.families.registry import family
from ffncalc.schema import Flag, HeadCount, LayerCount, Width


def test_a_declared_class_takes_its_class_defaults_and_a_subclass_made_later_its_own():
    @family(transformers="Qwen2Config", architecture="Qwen2-like")
    class Declared(DecoderConfig):
        num_key_value_heads: HeadCount | None
        num_hidden_layers: LayerCount

    class Plain(Declared):  # not declared: inherits Qwen2Config's defaults as they are
        pass

    @family(transformers="Qwen3MoeConfig")
    class Redeclared(Plain):
        pass

    qwen2, qwen3_moe = recorded("Qwen2Config")["fields"], recorded("Qwen3MoeConfig")["fields"]
    for cls, fields in ((Declared, qwen2), (Plain, qwen2), (Redeclared, qwen3_moe)):
        config = cls.model_validate({"model_type": "x"})
        assert (config.vocab_size, config.num_key_value_heads, config.num_hidden_layers) == (
            fields["vocab_size"],
            fields["num_key_value_heads"],
            fields["num_hidden_layers"],
        )
    assert Redeclared.config_class == "Qwen3MoeConfig" and Redeclared.architecture == "Qwen2-like"
    assert DecoderConfig.model_fields["vocab_size"].default == recorded("LlamaConfig")["fields"]["vocab_size"]
    assert Redeclared.model_json_schema()["properties"]["hidden_size"]["default"] == qwen3_moe["hidden_size"]
    assert [d.field for d in Redeclared.model_validate({"model_type": "x", "vocab_size": 8}).defaults_used()] == [
        "hidden_size",
        "num_attention_heads",
        "num_key_value_heads",
        "num_hidden_layers",
    ]


def test_a_field_takes_the_other_names_the_class_attribute_map_gives_it():
    @family(transformers="GPT2Config")
    class Gpt2Like(DecoderConfig):
        num_hidden_layers: LayerCount

    config = Gpt2Like.model_validate({"model_type": "gpt2", "n_embd": 64, "n_layer": 3, "n_head": 4})
    assert (config.hidden_size, config.num_hidden_layers, config.num_attention_heads) == (64, 3, 4)
    assert Gpt2Like.model_fields["hidden_size"].default == 768
    assert Gpt2Like.model_fields["vocab_size"].validation_alias is None  # GPT2Config names it once


def test_a_default_copied_from_the_record_is_refused():
    with pytest.raises(DeclarationError, match="Qwen2Config's record gives its default; write none"):

        @family(transformers="Qwen2Config")
        class Copied(DecoderConfig):
            num_hidden_layers: LayerCount = 32


def test_a_default_taken_otherwise_needs_a_reason_and_a_differing_value():
    @family(transformers="Qwen2Config", own_defaults={"num_hidden_layers": "a test's reason"})
    class Own(DecoderConfig):
        num_hidden_layers: LayerCount = 3

    assert Own.model_validate({"model_type": "x"}).num_hidden_layers == 3
    assert Own.own_defaults == {"num_hidden_layers": "a test's reason"}
    with pytest.raises(DeclarationError, match="own default is Qwen2Config's recorded one"):

        @family(transformers="Qwen2Config", own_defaults={"num_hidden_layers": "no reason at all"})
        class Same(DecoderConfig):
            num_hidden_layers: LayerCount = 32


def test_a_field_the_class_lacks_is_read_only_with_a_reason_and_inherits_it():
    with pytest.raises(DeclarationError, match="reads head_dim, which Qwen2Config has no field for"):

        @family(transformers="Qwen2Config")
        class Unsaid(DecoderConfig):
            head_dim: Width | None = None

    @family(transformers="Qwen2Config", read_beyond={"head_dim": "modeling_qwen2.py reads it with getattr"})
    class Beyond(DecoderConfig):
        head_dim: Width | None = None

    @family(transformers="Qwen2Config")
    class Child(Beyond):
        pass

    @family(transformers="Qwen3Config")  # Qwen3Config has head_dim: its default is the record's, not a reason
    class Native(Beyond):
        attention_bias: Flag

    assert Child.undeclared_keys == {"head_dim"} and Child.read_beyond == Beyond.read_beyond
    assert Native.read_beyond == {} and Native.model_fields["head_dim"].default == 128


def test_a_class_not_in_the_record_is_refused_naming_how_to_record_it():
    with pytest.raises(DeclarationError, match=r"NoSuchConfig is not in ffncalc/transformers_defaults\.json"):

        @family(transformers="NoSuchConfig")
        class Unknown(DecoderConfig):
            pass
