"""Pictures and widgets for the chapters.

Each chapter has its own module here. Rendering is done by pure functions (plain inputs in,
HTML or a matplotlib figure out) that are tested without a browser; the ipywidgets only wire
controls to them. Lower layers (tokenization, masking, the model) never import this package.
"""
