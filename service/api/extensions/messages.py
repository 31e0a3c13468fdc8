"""The validation messages marshmallow and webargs write, as catalog entries: a 422's per-field messages are
translated from these when the problem is rendered (service.i18n.translate_message reads the values back
out of the English text). Listed here because they are written by the libraries, not by us."""

from __future__ import annotations

from ...engine.i18n import N_

MARSHMALLOW = (
    N_("Missing data for required field."),
    N_("Field may not be null."),
    N_("Unknown field."),
    N_("Invalid input type."),
    N_("Invalid input."),
    N_("Invalid type."),
    N_("Invalid value."),
    N_("Not a valid string."),
    N_("Not a valid integer."),
    N_("Not a valid number."),
    N_("Not a valid boolean."),
    N_("Not a valid list."),
    N_("Not a valid mapping type."),
    N_("Not a valid date."),
    N_("Not a valid datetime."),
    N_("Not a valid UUID."),
    N_("Not a valid URL."),
    N_("Not a valid utf-8 string."),
    N_("Not a valid tuple."),
    N_("Number too large."),
    N_("Special numeric values (nan or infinity) are not permitted."),
    N_("String does not match expected pattern."),
    N_("Must be one of: {choices}."),
    N_("Must be equal to {other}."),
    N_("Length must be between {min} and {max}."),
    N_("Length must be {equal}."),
    N_("Shorter than minimum length {min}."),
    N_("Longer than maximum length {max}."),
    N_("Must be greater than or equal to {min}."),
    N_("Must be greater than {min}."),
    N_("Must be less than or equal to {max}."),
    N_("Must be less than {max}."),
    N_("Must be greater than or equal to {min} and less than or equal to {max}."),
    N_("Must be greater than {min} and less than or equal to {max}."),
    N_("Must be greater than or equal to {min} and less than {max}."),
    N_("Must be greater than {min} and less than {max}."),
    N_("One or more of the choices you made was not in: {choices}."),
)
