"""sites.yaml -> Config: reading and validating the planet's configuration, and editing the file.

``load`` reads sites.yaml into a :class:`configtypes.Config` (:func:`load.load_config`,
:func:`load.reread`); ``settings`` is the one table of the planet's settings, read by ``readers``;
``sites`` reads the ``sites`` list; ``fields`` holds what they share (the error naming a field's line);
``yamlfile`` is the one module that imports a YAML library (PyYAML to read, ruamel.yaml to edit).
"""
