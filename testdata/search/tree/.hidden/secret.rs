fn needle() {} // hidden
