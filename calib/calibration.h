// Calibration: measure the hardware, fit a profile. (See issue: calibration.)
#pragma once
