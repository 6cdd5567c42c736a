# Python frames in gdb's `bt`: a frame filter that shows, in place of each native call of the
# eval loop (_PyEval_EvalFrameDefault), the Python frames that call runs. Runs inside the hangpy
# module (frame_filter.cpp executes this file in the module's namespace), where the C++ function
# _python_frame_groups() is defined. `hangpy bt on|off` sets the filter's `enabled` (so does gdb's
# `disable frame-filter global hangpy-python-frames`); a disabled filter leaves `bt` to gdb alone.
#
# Splicing: the native frames are listed innermost first; so are the groups of Python frames
# (one group per eval-loop call, see cpython/eval_groups.h). The k-th eval-loop frame gets the k-th group.
# A filter must never break `bt`: any failure shows the native frames unchanged.
import gdb
from gdb.FrameDecorator import FrameDecorator

EVAL_LOOP_FUNCTION = "_PyEval_EvalFrameDefault"


class PythonFrameDecorator(FrameDecorator):
    """One Python frame, shown at the position of the eval-loop frame that runs it."""

    def __init__(self, eval_loop_frame, function, file_name, line, callers=()):
        super(PythonFrameDecorator, self).__init__(eval_loop_frame)
        self._function = function
        self._file_name = file_name
        self._line = line
        # The other Python frames of the same eval-loop call: gdb numbers a native frame once,
        # and prints "elided" frames indented under it, which is what they are.
        self._callers = list(callers)

    def elided(self):
        return iter(self._callers) if self._callers else None

    def function(self):
        return "%s [Python]" % self._function

    def filename(self):
        return self._file_name

    def line(self):
        return self._line

    def address(self):
        return None  # a pc would be the eval loop's, which says nothing about the Python frame

    def frame_args(self):
        return None

    def frame_locals(self):
        return None


class UnnamedFrameDecorator(FrameDecorator):
    """A native frame without a symbol. With any frame filter on, gdb prints every frame of
    `bt` through Python, where such a frame would read "in  ()"; gdb's own printing says "??"."""

    def function(self):
        return "??"


def _with_names(decorators):
    for decorator in decorators:
        try:
            unnamed = decorator.inferior_frame().name() is None
        except gdb.error:
            unnamed = False
        yield UnnamedFrameDecorator(decorator) if unnamed else decorator


def _is_eval_loop(decorator, eval_loop_function):
    frame = decorator.inferior_frame()
    # An inlined copy is not a call of the eval loop of its own (libpython.py checks the same).
    return frame.type() == gdb.NORMAL_FRAME and frame.name() == eval_loop_function


def _splice(decorators, groups, eval_loop_function):
    pending = list(groups)
    for decorator in decorators:
        if pending and _is_eval_loop(decorator, eval_loop_function):
            frame = decorator.inferior_frame()
            shown = [PythonFrameDecorator(frame, function, file_name, line or None)
                     for function, file_name, line in pending.pop(0)]
            yield PythonFrameDecorator(frame, shown[0]._function, shown[0]._file_name,
                                       shown[0]._line, shown[1:])
        else:
            yield decorator


FILTER_NAME = "hangpy-python-frames"


class PythonFrameFilter(object):
    def __init__(self):
        self.name = FILTER_NAME
        self.priority = 100
        self.enabled = True

    def filter(self, decorators):
        try:
            groups = _python_frame_groups()
            eval_loop_function = _eval_loop_function() or EVAL_LOOP_FUNCTION
        except gdb.GdbError:
            groups = None  # no Python here (or unreadable): the native stack as it is
        if not groups:
            return _with_names(decorators)
        return _with_names(_splice(decorators, groups, eval_loop_function))


def register_frame_filter():
    frame_filter = PythonFrameFilter()
    gdb.frame_filters[frame_filter.name] = frame_filter
