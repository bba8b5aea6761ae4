"""The language-model policy's error: a table, split, record or setting an arm cannot use, named."""


class LMPolicyError(ValueError):
    """A table or split a language-model arm cannot train on, a record or setting it cannot read, named."""
