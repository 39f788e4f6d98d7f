"""What a person touches: plotly figures, ipywidgets panels and the ``modtok`` command.

- :mod:`modtok.ui.plots`   figures shared by the notebooks
- :mod:`modtok.ui.widgets` controls and the ``Panel`` that redraws a table and a figure together
- :mod:`modtok.ui.cli`     ``modtok ...`` for scripted runs: it parses the arguments, calls one
  library function per command and prints what it returns
"""
