int courier_vips_placeholder(void);
