"""Frozen value classes (ffncalc/values.py) behave as frozen dataclasses: the spec relies on it."""

from functools import cached_property

import pytest

from ffncalc.spec import Layer, Norm
from ffncalc.values import COMPILED_AFTER, Value, replace


class Point(Value):
    x: int
    y: int = 0
    label: str = ""


def test_fields_are_taken_by_position_or_name_with_defaults():
    assert Point(1, 2).__dict__ == {"x": 1, "y": 2, "label": ""}
    assert Point(y=5, x=1) == Point(1, 5)


def test_equal_values_have_equal_hashes_whatever_the_argument_order():
    assert hash(Point(1, label="a", y=2)) == hash(Point(1, 2, "a"))
    assert len({Norm("rmsnorm", 8), Norm(dim=8, kind="rmsnorm")}) == 1


def test_values_of_different_classes_are_never_equal():
    class Other(Value):
        x: int
        y: int = 0
        label: str = ""

    assert Point(1) != Other(1)


def test_a_value_cannot_be_changed():
    point = Point(1)
    with pytest.raises(AttributeError, match="frozen"):
        point.x = 2
    with pytest.raises(AttributeError, match="frozen"):
        del point.x


def test_replace_copies_with_changes_and_refuses_unknown_fields():
    point = Point(1, 2)
    assert replace(point, y=3) == Point(1, 3)
    assert point == Point(1, 2)
    with pytest.raises(TypeError, match="unexpected keyword argument 'z'"):
        replace(point, z=1)


def test_a_missing_field_too_many_or_a_repeated_one_are_refused_as_a_function_call_would_be():
    with pytest.raises(TypeError, match="missing 1 required positional argument: 'x'"):
        Point()
    with pytest.raises(TypeError, match="takes from 2 to 4 positional arguments but 5 were given"):
        Point(1, 2, "a", 4)
    with pytest.raises(TypeError, match="multiple values for argument 'x'"):
        Point(1, x=2)


def test_a_class_compiles_its_own_init_once_it_has_made_enough_values():
    class Base(Value):
        a: int

    class Derived(Base):
        b: int = 2

    assert "__init__" not in Base.__dict__ or Base.__init__ is Value.__init__
    values = [Base(n) for n in range(COMPILED_AFTER)]
    assert Base.__init__ is not Value.__init__  # compiled: the class has made COMPILED_AFTER values
    assert [value.__dict__ for value in values] == [{"a": n} for n in range(COMPILED_AFTER)]
    assert Derived(1).__dict__ == {"a": 1, "b": 2}  # Base's compiled __init__ is not Derived's
    assert Derived.__init__ is Value.__init__


def test_the_first_values_of_a_class_equal_what_its_compiled_init_makes():
    class Early(Value):
        x: int
        y: int = 0
        label: str = ""

    early = [Early(1, 2), Early(y=5, x=1), Early(1, label="a")]
    for _ in range(COMPILED_AFTER):
        Early(0)
    assert Early.__init__ is not Value.__init__
    assert early == [Early(1, 2), Early(y=5, x=1), Early(1, label="a")]
    assert [value.__dict__ for value in early] == [
        Early(1, 2).__dict__,
        Early(1, 5).__dict__,
        Early(1, 0, "a").__dict__,
    ]


@pytest.mark.parametrize("compiled", [False, True], ids=["first values", "compiled"])
def test_wrong_arguments_get_the_same_error_before_and_after_compiling(compiled):
    class Pair(Value):
        x: int
        y: int = 0

    if compiled:
        for _ in range(COMPILED_AFTER):
            Pair(0)
    with pytest.raises(TypeError, match="missing 1 required positional argument: 'x'"):
        Pair()
    with pytest.raises(TypeError, match="multiple values for argument 'x'"):
        Pair(1, x=2)
    with pytest.raises(TypeError, match="unexpected keyword argument 'z'"):
        Pair(1, z=2)


def test_a_field_without_default_after_one_with_is_refused_when_the_class_is_made():
    with pytest.raises(TypeError, match="'b' without a default follows"):

        class Bad(Value):
            a: int = 0
            b: int


def test_subclasses_extend_their_base_fields():
    class Labelled(Point):
        colour: str = "red"

    assert Labelled(1).__dict__ == {"x": 1, "y": 0, "label": "", "colour": "red"}


def test_the_repr_names_every_field():
    assert repr(Norm("layernorm", 4, True)) == "Norm(kind='layernorm', dim=4, bias=True, shape=())"
    assert "Layer(name='model.layers.{i}'" in repr(Layer("model.layers.{i}", None, None, ()))


def test_a_hashed_value_stays_equal_to_an_unhashed_one_and_its_copies_carry_no_stale_hash():
    hashed = Point(1, 2)
    hash(hashed)  # kept on the value once computed
    assert hashed == Point(1, 2) and Point(1, 2) == hashed
    changed = replace(hashed, y=3)
    assert changed == Point(1, 3) and hash(changed) == hash(Point(1, 3))
    assert repr(hashed) == "Point(x=1, y=2, label='')"


def test_equality_reads_the_fields_alone_so_a_cached_property_does_not_change_it():
    class Area(Value):
        width: int
        height: int

        @cached_property
        def area(self) -> int:
            return self.width * self.height

    measured = Area(2, 3)
    assert measured.area == 6
    assert measured == Area(2, 3) and hash(measured) == hash(Area(2, 3))
