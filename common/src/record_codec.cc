#include "barrage/common/record_codec.h"
