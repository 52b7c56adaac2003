#include "calib/calibration.h"
